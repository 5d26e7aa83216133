//go:build etcd

package cmdutil

import (
	"context"
	"errors"
	"time"

	"github.com/agenttree/agenttree/controller/leader"
	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/controller/nodes/etcdnodes"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
)

// errNoEtcd is never returned by a build with etcd.
var errNoEtcd = errors.New("built without etcd")

// dialEtcd dials the cluster c names (etcdstore.Dial).
func dialEtcd(ctx context.Context, c EtcdTarget) (EtcdBackend, error) {
	return etcdstore.Dial(ctx, etcdstore.Config{Endpoints: c.Endpoints, Prefix: c.Prefix, CA: c.CA, Cert: c.Cert, Key: c.Key})
}

// campaign campaigns under prefix on b's cluster (leader.Campaign) and
// fences b's writes by the term won.
func campaign(ctx context.Context, b EtcdBackend, prefix, name string, waiting func(string)) (Term, error) {
	s, ok := b.(*etcdstore.Store)
	if !ok {
		return nil, errors.New("the controllers' election needs the etcd store's client")
	}
	t, err := leader.Campaign(ctx, leader.Config{Client: s.Client(), Prefix: prefix, Name: name}, waiting)
	if err != nil {
		return nil, err
	}
	s.Fence(t.Key(), t.Rev())
	return t, nil
}

// leaderOf is who leads the election under prefix on b's cluster.
func leaderOf(ctx context.Context, b EtcdBackend, prefix string) (string, error) {
	s, ok := b.(*etcdstore.Store)
	if !ok {
		return "", errors.New("the controllers' election needs the etcd store's client")
	}
	return leader.Leader(ctx, s.Client(), prefix)
}

// nodesOf is the node registry under prefix on b's cluster.
func nodesOf(b EtcdBackend, prefix string) (NodeRegistry, error) {
	s, ok := b.(*etcdstore.Store)
	if !ok {
		return nil, errors.New("the nodes need the etcd store's client")
	}
	return etcdNodes{etcdnodes.New(s.Client(), prefix)}, nil
}

// etcdNodes is etcdnodes.Registry as a NodeRegistry.
type etcdNodes struct{ *etcdnodes.Registry }

func (r etcdNodes) Join(ctx context.Context, n nodes.Node, ttl time.Duration) (NodeMember, error) {
	m, err := r.Registry.Join(ctx, n, ttl)
	if err != nil {
		return nil, err
	}
	return m, nil
}
