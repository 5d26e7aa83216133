package cmdutil

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/textsafe"
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

// NodeSurvey is where e's open issues are among its nodes (nodes.Look),
// read from the cluster; the labels of those waiting for a node are read
// here, to say which node they wait for.
func (a *App) NodeSurvey(ctx context.Context, e *engine.Engine, open []nodes.Open) (nodes.Survey, error) {
	reg, err := a.Nodes(ctx, e.Config)
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
	for i, o := range open {
		if _, ok := assigned[o.ID]; !ok && o.WantsNode {
			if iss, err := e.Store.Get(o.ID); err == nil {
				open[i].Labels = iss.Labels
			}
		}
	}
	return nodes.Look(open, live, assigned), nil
}

// NodeHere is the node that runs this checkout's agents, as `agenttree
// node` wrote it when it joined; "" when none did.
func NodeHere(e *engine.Engine) string {
	data, err := os.ReadFile(e.Store.Layout().Node())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// StartsHere gives issue id to this checkout's node when it has none,
// and errs, saying where to run what, when the issue is another node's
// or no node runs here: with state.nodes an agent runs only on its
// issue's node (docs/ARCHITECTURE.md §8, "Nodes").
func (a *App) StartsHere(ctx context.Context, e *engine.Engine, id int) error {
	if !e.Config.State.Nodes.On {
		return nil
	}
	reg, err := a.Nodes(ctx, e.Config)
	if err != nil {
		return err
	}
	here := NodeHere(e)
	assigned, err := reg.Assigned(ctx)
	if err != nil {
		return err
	}
	switch node, ok := assigned[id]; {
	case here == "":
		return fmt.Errorf("issue %d's agent runs on a node, and none runs in this checkout: start it where `agenttree node` runs, or run one here", id)
	case ok && node != here:
		return fmt.Errorf("issue %d's agent runs on node %s, not on this one (%s): start it there, or move it here with `agenttree assign %d --node %s`",
			id, textsafe.Line(node, 64), textsafe.Line(here, 64), id, textsafe.Line(here, 64))
	case !ok:
		return reg.Assign(ctx, id, here, "")
	}
	return nil
}

// ProcessName says which process this is to the others sharing an etcd
// cluster: the election's leader key and a node's record carry it.
func ProcessName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}
