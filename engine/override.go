package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/transition"
	"github.com/agenttree/agenttree/stages"
)

// Override carries out order o on issue id, for actor (the history entry
// names it; who may give which order is the caller's business). Under the
// issue's lock it decides from the issue as it is there, writes the change
// and the history entry in one update, then enters the stage it moved the
// issue to as any arrival does (entry hooks run, and where they send the
// issue is followed), and queues the messages of the history it wrote.
//
// A resume (Kind stages.MoveResume) also marks the issue's watch state
// (hooks.WatchResumedAt), so a hook waiting on something outside, such as
// CI, tries once more what failed before.
func (e *Engine) Override(ctx context.Context, id int, actor Actor, o Order) (*Result, error) {
	return act.Finish(e.override(ctx, id, actor, o))
}

func (e *Engine) override(ctx context.Context, id int, actor Actor, o Order) (*Result, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	p, err := e.where(iss, o.Anywhere)
	if err != nil {
		return nil, err
	}
	if o.Check != nil {
		if err := o.Check(p); err != nil {
			return nil, err
		}
	}
	base := Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Reasons: []string{}}
	t := transition.New(ctx, e.deps, tx, actor, false, e.Machine(p.Flow).Start(iss.Stage))
	if o.Target == nil {
		return t.Order(p, o, nil, nil, base)
	}
	to, skipped, err := o.Target(p)
	switch {
	case err != nil:
		return nil, err
	case to == nil:
		base.Status, base.Reasons = StatusFinal, []string{o.Reason}
		return &base, nil
	}
	return t.Order(p, o, to, skipped, base)
}

// where finds where iss is. With anywhere, a stage the config does not
// declare (or that left the issue's flow) is no error: the order moves the
// issue out of it.
func (e *Engine) where(iss *issues.Issue, anywhere bool) (Place, error) {
	flow, node, err := e.locate(iss)
	if err == nil || !anywhere {
		return Place{Issue: iss, Flow: flow, Node: node}, err
	}
	if flow, err = e.Config.Flow(iss.Flow); err != nil {
		return Place{}, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	p := Place{Issue: iss, Flow: flow}
	if n, ok := e.Config.Node(iss.Stage); ok && n.Path == iss.Stage {
		p.Node = n
	}
	return p, nil
}

// Settle moves issue id to its flow's terminal stage of kind term, for a
// fact the controller saw outside agenttree: its PR merged (completion)
// or closed (abandon) by hand on the forge. The stage's entry hooks run as
// on any arrival (merging a merged PR succeeds). An issue already at a
// terminal stage is left where it is.
func (e *Engine) Settle(ctx context.Context, id int, term stages.Terminal, reason string) (*Result, error) {
	return e.Override(ctx, id, Actor{Kind: ActorController}, Order{Kind: stages.MoveManual, Reason: reason,
		Target: func(p Place) (*stages.Node, []string, error) {
			if p.Node.Terminal() != stages.TerminalNone {
				return nil, nil, nil
			}
			i := slices.IndexFunc(p.Flow.Nodes, func(n *stages.Node) bool { return n.Terminal() == term })
			if i < 0 {
				return nil, nil, fmt.Errorf("issue %d: %s, but flow %q has no %s stage to put it in; add a stage with `terminal: %s`", id, reason, p.Flow.Name, term, term)
			}
			return p.Flow.Nodes[i], nil, nil
		}})
}
