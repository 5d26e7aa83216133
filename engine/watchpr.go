package engine

import (
	"context"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/engine/transition"
	"github.com/agenttree/agenttree/stages"
)

// Watcher is the entry of a hook that asks for the issue's PR to be
// watched in the background while an agent or a person works at node
// (poll_pr_status), or nil.
func (e *Engine) Watcher(node *stages.Node) *stages.HookEntry { return prhead.Watcher(e.Hooks, node) }

// WatchPR is the controller's background look at the PR of issue id, at a
// stage whose watcher asks for one: it polls CI once (the hook whose spec
// says it waits for CI), and a failure or a conflict on the PR's head goes
// to the watcher's on_ci_failure / on_conflict, else to the stage's
// on_failure, as for the controller's own stages — once per head and
// failure. It returns nil when there is nothing to watch.
func (e *Engine) WatchPR(ctx context.Context, id int) (*Result, error) {
	return act.Finish(e.watchPR(ctx, id))
}

func (e *Engine) watchPR(ctx context.Context, id int) (*Result, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	flow, node, err := e.locate(iss)
	if err != nil {
		return nil, err
	}
	w := e.Watcher(node)
	if w == nil || iss.PRNumber == 0 || iss.Escalated != nil {
		return nil, nil
	}
	probe, err := prhead.Probe(e.Hooks, w)
	if err != nil {
		return nil, err
	}
	base := Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Reasons: []string{}, Status: StatusWaiting}
	return transition.New(ctx, e.deps, tx, Actor{Kind: ActorController}, false, e.Machine(flow).Start(node.Path)).Watch(iss, node, probe, base)
}
