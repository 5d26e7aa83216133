//go:build etcd

package cmdutil

import (
	"context"
	"errors"

	"github.com/agenttree/agenttree/engine/issues/etcdstore"
)

// errNoEtcd is never returned by a build with etcd.
var errNoEtcd = errors.New("built without etcd")

// dialEtcd dials the cluster c names (etcdstore.Dial).
func dialEtcd(ctx context.Context, c EtcdTarget) (EtcdBackend, error) {
	return etcdstore.Dial(ctx, etcdstore.Config{Endpoints: c.Endpoints, Prefix: c.Prefix, CA: c.CA, Cert: c.Cert, Key: c.Key})
}
