package cmdutil

import (
	"context"
	"fmt"
	"time"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/stages"
)

// NodeRegistry is the nodes of a repository whose agents run on nodes
// (state.nodes) and the issues given to each, kept in its etcd cluster
// (controller/nodes/etcdnodes).
type NodeRegistry interface {
	nodes.Registry
	// Join names n among the nodes alive on a lease of ttl, kept until
	// ctx ends or the member leaves.
	Join(ctx context.Context, n nodes.Node, ttl time.Duration) (NodeMember, error)
}

// NodeMember is this process among the nodes while its lease lasts.
type NodeMember interface {
	// Done is closed when the lease ended.
	Done() <-chan struct{}
	// Leave takes the node out at once.
	Leave()
}

// Nodes is the node registry of cfg's repository, whose state.nodes must
// be written (docs/ARCHITECTURE.md §8, "Nodes").
func (a *App) Nodes(ctx context.Context, cfg *stages.Config) (NodeRegistry, error) {
	if cfg.State.Backend != stages.StateEtcd || !cfg.State.Nodes.On {
		return nil, fmt.Errorf("%s does not run agents on nodes: write `nodes: {}` under `state:` (with the state in etcd) to run them there (docs/CONFIG.md, state.nodes)", cfg.File)
	}
	b, err := a.Etcd(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return nodesOf(b, EtcdConfig(cfg).Prefix)
}

// NodeSurvey is where cfg's unfinished issues are among its nodes
// (nodes.Look), read from the cluster.
func (a *App) NodeSurvey(ctx context.Context, cfg *stages.Config, unfinished []int) (nodes.Survey, error) {
	reg, err := a.Nodes(ctx, cfg)
	if err != nil {
		return nodes.Survey{}, err
	}
	live, err := reg.Live(ctx)
	if err != nil {
		return nodes.Survey{}, err
	}
	assigned, err := reg.Assigned(ctx)
	if err != nil {
		return nodes.Survey{}, err
	}
	return nodes.Look(unfinished, live, assigned), nil
}
