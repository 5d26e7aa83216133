//go:build !etcd

package cmdutil

import (
	"context"
	"errors"
)

// errNoEtcd: this build has no etcd client. Linking etcd's gRPC client
// costs every command its package start-up, `next` included (about 1.3×
// its time: bench/README.md, "next with etcd's client linked"), so it is
// in the builds that ask for it (docs/ARCHITECTURE.md §8).
var errNoEtcd = errors.New("this agenttree was built without etcd's client; install it with `go install -tags etcd ./cmd/agenttree` from the repository (README)")

func dialEtcd(context.Context, EtcdTarget) (EtcdBackend, error) { return nil, errNoEtcd }

func campaign(context.Context, EtcdBackend, string, string, func(string)) (Term, error) {
	return nil, errNoEtcd
}

func leaderOf(context.Context, EtcdBackend, string) (string, error) { return "", errNoEtcd }

func nodesOf(EtcdBackend, string) (NodeRegistry, error) { return nil, errNoEtcd }
