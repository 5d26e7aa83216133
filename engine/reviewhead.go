package engine

import (
	"context"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/engine/transition"
)

// A head pushed to the PR while a person reviews it goes back through the
// stage that ran CI before the review (prhead.Stale, docs/ARCHITECTURE.md
// §5); a person approves the new head once CI passed on it.

// ReviewHead is the controller's look at the PR of issue id, waiting at a
// human review, whose head is now head (as the forge reported it): a head
// CI did not pass sends the issue back through the stage that runs CI.
// It returns nil when there is nothing to do.
func (e *Engine) ReviewHead(ctx context.Context, id int, head string) (*Result, error) {
	return act.Finish(e.reviewHead(ctx, id, head))
}

func (e *Engine) reviewHead(ctx context.Context, id int, head string) (*Result, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	flow, node, err := e.locate(iss)
	if err != nil || !node.HumanReview() || iss.Escalated != nil {
		return nil, err
	}
	rc := prhead.Stale(e.Hooks, flow, node, iss, head)
	if rc == nil {
		return nil, nil
	}
	base := Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Reasons: []string{}, Review: true}
	return transition.New(ctx, e.deps, tx, Actor{Kind: ActorController}, false, e.Machine(flow).Start(node.Path)).SendBack(iss, rc, base)
}
