package engine

import (
	"context"
	"fmt"
	"github.com/agenttree/agenttree/engine/act"
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Order is a move of an issue that the stage machine does not make: a
// person's word over the pipeline, or a fact the controller saw outside
// agenttree. It need not be an edge of the flow, only stay inside it.
type Order struct {
	// Kind is the history entry's kind (resume, skip, move, ...).
	Kind stages.Move
	// Reason is kept in the history entry; it is the Result's first reason.
	Reason string
	// Target is where the order puts the issue, and the stages it passes
	// over, decided from the issue as it is under its lock. A nil node
	// (and no error) says the issue is already where the order leads:
	// nothing is written and the Result is StatusFinal. A nil Target
	// leaves the issue at its stage (a resume).
	Target func(Place) (to *stages.Node, skipped []string, err error)
	// Change is a change to the issue written in the same update as the
	// history entry (a resume clears the escalation, budgets and breaker).
	Change func(*issues.Issue)
	// Instructions, for an order that leaves the issue at its stage, say
	// who takes it up there, from the issue as written; nil or "": the
	// stage's own instructions.
	Instructions func(Place) string
	// Anywhere: the order works on an issue at a stage the config no
	// longer declares, or that left the issue's flow (Place.Node is nil).
	Anywhere bool
	// Check refuses the order, from the issue as it is under its lock
	// (a resume of an issue that waits on nothing a resume clears); nil
	// for none.
	Check func(Place) error
}

// Place is where a locked issue is.
type Place struct {
	Issue *issues.Issue
	Flow  *stages.Flow
	// Node is nil for a stage the config does not declare.
	Node *stages.Node
}

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
	t := &transition{e: e, ctx: ctx, tx: tx, actor: actor, run: e.Machine(p.Flow).Start(iss.Stage)}
	if o.Target == nil {
		return t.stay(p, o, base)
	}
	to, skipped, err := o.Target(p)
	switch {
	case err != nil:
		return nil, err
	case to == nil:
		base.Status, base.Reasons = StatusFinal, []string{o.Reason}
		return &base, nil
	}
	return t.override(p, o, hop{from: p.Node, to: to, kind: o.Kind, reason: o.Reason}, skipped, base)
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

// stay writes an order that leaves the issue where it is.
func (t *transition) stay(p Place, o Order, base Result) (*Result, error) {
	cur, err := t.write(p.Issue, o, p.Issue.Stage, nil)
	if err != nil {
		return nil, err
	}
	if o.Kind == stages.MoveResume {
		// "Try again" means CI too: the waiting hook reruns a failure it
		// saw before this (a flaky check), once.
		if err := t.tx.UpdateWatch(map[string]string{hooks.WatchResumedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
			base.Warnings = append(base.Warnings, "could not ask for CI to run again: "+err.Error())
		}
	}
	res := base
	res.Status, res.Kind, res.Version, res.Reasons = StatusAdvanced, o.Kind, cur.Version, []string{o.Reason}
	if o.Instructions != nil {
		res.Instructions = o.Instructions(Place{Issue: cur, Flow: p.Flow, Node: p.Node})
	}
	if res.Instructions == "" && p.Node != nil {
		res.Instructions = t.e.Instructions(p.Node, cur)
	}
	if err := t.e.queueEntries(t.ctx, cur, len(p.Issue.History)); err != nil {
		res.Warnings = append(res.Warnings, "could not queue the messages of this change (the controller queues them at its next pass): "+err.Error())
	}
	return &res, nil
}

// override writes the move h that order o makes in one update, then
// enters h.to the way any arrival does, and follows where its entry hooks
// send the issue.
func (t *transition) override(p Place, o Order, h hop, skipped []string, base Result) (*Result, error) {
	cur, err := t.write(p.Issue, o, h.to.Path, func(i *issues.Issue) {
		i.Stage, i.EntryPending, i.Escalated = h.to.Path, pendingOn(h), nil
	})
	if err != nil {
		return nil, err
	}
	j := t.follow(cur, h)
	f := findings{issue: cur, skipped: skipped, journey: &j}
	res := f.result(base, false)
	if err := t.settle(f, &res, len(p.Issue.History)); err != nil {
		return nil, err
	}
	return &res, nil
}

// write makes, in one update of iss, the move (nil for none) and the
// order's change, and adds the order's history entry, from the issue's
// stage to to.
func (t *transition) write(iss *issues.Issue, o Order, to string, move func(*issues.Issue)) (*issues.Issue, error) {
	at := time.Now().UTC().Truncate(time.Second)
	return t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		from := cur.Stage
		if move != nil {
			move(cur)
		}
		if o.Change != nil {
			o.Change(cur)
		}
		cur.History = append(cur.History, issues.HistoryEntry{From: from, To: to, Kind: o.Kind, Actor: string(t.actor.Kind), Request: t.actor.Request, Reason: o.Reason, At: at})
		return nil
	})
}

// pendingOn is the entry work a move h leaves to do, marked in the write
// of the move as commit marks it: h.to's entry hooks, entered from h.from
// (nil: from a stage the config does not declare).
func pendingOn(h hop) *issues.EntryPending {
	if len(h.to.Entering(h.from)) == 0 {
		return nil
	}
	p := &issues.EntryPending{Stage: h.to.Path}
	if h.from != nil {
		p.From = h.from.Path
	}
	return p
}

// follow enters h.to once the move h is written, and follows where the
// entry hooks send the issue from there: the journey of a move the stage
// machine did not make, followed by those it makes.
func (t *transition) follow(cur *issues.Issue, h hop) journey {
	t.run.Place(h.to.Path)
	a := t.arrive(cur, h)
	j := journey{issue: a.issue}
	if a.next != nil {
		j = t.drive(a.issue, h.to, *a.next, false)
	}
	j.want, j.gate = h, decision{status: StatusAdvanced, hop: h}
	j.hops, j.arrivals = append([]hop{h}, j.hops...), append([]arrival{a}, j.arrivals...)
	return j
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
