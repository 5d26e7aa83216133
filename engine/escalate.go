package engine

import (
	"context"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/transition"
)

// Reconcile is the controller's pass over issue id (docs/ARCHITECTURE.md §6): it
// continues entry work that has not finished, from where it stopped (at
// any stage), and moves an issue at a controller stage on through its
// gate, as the controller. A pending hook leaves the issue waiting, with
// Result.Outcome.RetryAfter saying when to look again.
func (e *Engine) Reconcile(ctx context.Context, id int) (*Result, error) {
	return act.Finish(e.forward(ctx, id, Actor{Kind: ActorController}, false, false))
}

// ReconcileSeen is Reconcile of seen, the issue as the controller read it
// when it found the issue due: changed since, the pass is a lost race
// (Result.Conflict), looked at again at the next tick.
func (e *Engine) ReconcileSeen(ctx context.Context, seen *issues.Issue) (*Result, error) {
	return act.Finish(e.forwardFrom(ctx, seen, Actor{Kind: ActorController}, false, false, nil))
}

// Then is what a caller does in the transaction of a pass, with its
// result (its Outcome filled), before the issue's lock is released: the
// controller keeps its polling state in the same transaction as the pass
// it polled with (docs/ARCHITECTURE.md §6), the issue and its watch state
// read once for both. tx is the pass's; Then must not unlock it.
type Then func(tx *issues.Tx, res *Result)

// ReconcileSeenThen is ReconcileSeen, with then called in the pass's
// transaction once the issue was locked and its move decided. It is not
// called when the pass fails, nor when no transaction was needed (an
// issue the controller may not move, a lost race): the caller takes the
// lock itself then.
func (e *Engine) ReconcileSeenThen(ctx context.Context, seen *issues.Issue, then Then) (*Result, error) {
	return act.Finish(e.forwardFrom(ctx, seen, Actor{Kind: ActorController}, false, false, then))
}

// Escalate stops issue id for a person, for a reason the controller
// found outside any hook (the forge failing again and again). An issue
// already escalated is left as it is.
func (e *Engine) Escalate(ctx context.Context, id int, kind issues.EscalationKind, reason string) (*Result, error) {
	return act.Finish(e.escalateFor(ctx, id, kind, reason))
}

func (e *Engine) escalateFor(ctx context.Context, id int, kind issues.EscalationKind, reason string) (*Result, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	r := &Result{Issue: id, From: iss.Stage, To: iss.Stage, Status: StatusEscalated, Reasons: []string{reason}, Escalated: iss.Escalated, Version: iss.Version}
	if iss.Escalated != nil {
		return r, nil
	}
	t := transition.New(ctx, e.deps, tx, Actor{Kind: ActorController}, false, nil)
	cur, err := t.Escalate(iss, issues.Escalation{Stage: iss.Stage, Kind: kind, Reason: reason})
	if err != nil {
		return nil, err
	}
	r.Escalated, r.Version = cur.Escalated, cur.Version
	if err := e.queueEntries(ctx, cur, len(iss.History)); err != nil {
		r.Warnings = append(r.Warnings, "could not queue the escalation's messages (the controller queues them at its next pass): "+err.Error())
	}
	return r, nil
}
