package engine

import (
	"context"
	"github.com/agenttree/agenttree/engine/act"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/stages"
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
	return act.Finish(e.forwardFrom(ctx, seen, Actor{Kind: ActorController}, false, false))
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
	t := &transition{e: e, ctx: ctx, tx: tx, actor: Actor{Kind: ActorController}}
	cur, err := t.escalate(iss, escalation{Escalation: issues.Escalation{Stage: iss.Stage, Kind: kind, Reason: reason}})
	if err != nil {
		return nil, err
	}
	r.Escalated, r.Version = cur.Escalated, cur.Version
	if err := e.queueEntries(ctx, cur, len(iss.History)); err != nil {
		r.Warnings = append(r.Warnings, "could not queue the escalation's messages (the controller queues them at its next pass): "+err.Error())
	}
	return r, nil
}

// all is everything the command's steps said, in the order they ran.
func (f findings) all() said {
	var s said
	s.add(f.approval)
	s.add(f.said)
	if f.resumed != nil {
		s.add(f.resumed.said)
	}
	if j := f.journey; j != nil {
		s.add(j.gate.said)
		for _, a := range j.arrivals {
			s.add(a.said)
		}
		s.add(j.said)
	}
	return s
}

// latest is the issue as the command's steps last read or wrote it.
func (f findings) latest() *issues.Issue {
	if f.journey != nil && f.journey.issue != nil {
		return f.journey.issue
	}
	return f.issue
}

// settle keeps what the command's hooks asked of people and agents: the
// first escalation stops the issue for a person (a history entry, not a
// move), the messages hooks asked to send go to the issue's outbox, and so
// do the messages of every history entry the command wrote (it had before
// entries when the command began).
func (t *transition) settle(f findings, r *Result, before int) error {
	s := f.all()
	iss := f.latest()
	if len(s.send) > 0 {
		if err := notice.Queue(t.ctx, t.e.Outbox(iss.ID), iss, f.scope, s.send); err != nil {
			r.Warnings = append(r.Warnings, "could not queue messages for the agent: "+err.Error())
		}
	}
	if len(s.escalations) > 0 {
		cur, err := t.escalate(iss, s.escalations[0])
		if err != nil {
			return err
		}
		iss = cur
		r.Status, r.Escalated, r.Version = StatusEscalated, cur.Escalated, cur.Version
	}
	if err := t.e.queueEntries(t.ctx, iss, before); err != nil {
		r.Warnings = append(r.Warnings, "could not queue the messages of this move (the controller queues them at its next pass): "+err.Error())
	}
	return nil
}

// escalate stops iss for a person: it moves no more until a person
// resumes, skips, aborts or moves it.
func (t *transition) escalate(iss *issues.Issue, esc escalation) (*issues.Issue, error) {
	now := time.Now().UTC().Truncate(time.Second)
	return t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		e := esc.Escalation
		e.At = now
		if e.Stage == "" {
			e.Stage = cur.Stage
		}
		cur.Escalated = &e
		if esc.failure != nil {
			// The failure that spent the budget or opened the breaker
			// counts in the breaker, not as a step back; its full text
			// is kept beside the reason's one line.
			policy.CountEscalation(cur, esc.failure, t.e.Config, e.Stage)
			e.Reason = policy.Summary(e.Reason)
			e.Detail = esc.failure.Reason
		}
		cur.History = append(cur.History, issues.HistoryEntry{From: cur.Stage, To: cur.Stage, Kind: stages.MoveEscalate,
			Actor: string(t.actor.Kind), Request: t.actor.Request, Reason: e.Reason, At: now})
		return nil
	})
}
