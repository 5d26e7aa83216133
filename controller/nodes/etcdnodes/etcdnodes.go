// Package etcdnodes keeps the nodes and the issues' nodes
// (controller/nodes) in the state's etcd cluster (docs/ARCHITECTURE.md
// §8, "Nodes"). The keys, under the state's prefix P:
//
//	P/nodes/<name>     a node alive: its nodes.Node in JSON, on its lease
//	P/assign/<id>      the name of the node issue id was given to
//
// A node's key goes with its lease.
package etcdnodes

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/controller/nodes"
)

// Registry is the nodes and the issues' nodes of one repository.
type Registry struct {
	cli *clientv3.Client
	p   string
}

// New is the registry under prefix (the state's) in cli's cluster.
func New(cli *clientv3.Client, prefix string) *Registry {
	return &Registry{cli: cli, p: strings.TrimRight(prefix, "/")}
}

func (r *Registry) nodesPrefix() string        { return r.p + "/nodes/" }
func (r *Registry) nodeKey(name string) string { return r.nodesPrefix() + name }
func (r *Registry) assignPrefix() string       { return r.p + "/assign/" }
func (r *Registry) assignKey(id int) string    { return fmt.Sprintf("%s%010d", r.assignPrefix(), id) }

// Live lists the nodes alive, by name.
func (r *Registry) Live(ctx context.Context) ([]nodes.Node, error) {
	resp, err := r.cli.Get(ctx, r.nodesPrefix(), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("read the nodes: %w", err)
	}
	out := make([]nodes.Node, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var n nodes.Node
		if err := json.Unmarshal(kv.Value, &n); err != nil {
			return nil, fmt.Errorf("read node %q: %w", kv.Key, err)
		}
		// A key written by hand that names another node, or none that
		// could be one, is not a node alive.
		if string(kv.Key) != r.nodeKey(n.Name) || nodes.ValidName(n.Name) != nil {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// Assigned is every issue's node, by id.
func (r *Registry) Assigned(ctx context.Context) (map[int]string, error) {
	resp, err := r.cli.Get(ctx, r.assignPrefix(), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("read the issues' nodes: %w", err)
	}
	out := make(map[int]string, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		id, err := strconv.Atoi(strings.TrimPrefix(string(kv.Key), r.assignPrefix()))
		if err != nil {
			continue // not one of ours
		}
		out[id] = string(kv.Value)
	}
	return out, nil
}

// Assign gives issue id to node name if its node is still from ("":
// none), else ErrMoved: two controllers, or a person and the
// controller, never both move it.
func (r *Registry) Assign(ctx context.Context, id int, name, from string) error {
	key := r.assignKey(id)
	cond := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	if from != "" {
		cond = clientv3.Compare(clientv3.Value(key), "=", from)
	}
	resp, err := r.cli.Txn(ctx).If(cond).Then(clientv3.OpPut(key, name)).Commit()
	if err != nil {
		return fmt.Errorf("give issue %d to node %s: %w", id, name, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("issue %d: %w", id, nodes.ErrMoved)
	}
	return nil
}

var _ nodes.Registry = (*Registry)(nil)
