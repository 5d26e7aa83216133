package engine

import (
	"context"
	"slices"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/engine/transition"
	"github.com/agenttree/agenttree/stages"
)

// Next moves issue id to the next stage of its flow if the gates pass.
func (e *Engine) Next(ctx context.Context, id int, actor Actor, dryRun bool) (*Result, error) {
	return act.Finish(e.forward(ctx, id, actor, dryRun, false))
}

// Approve moves issue id out of a human review. Only a person may approve.
func (e *Engine) Approve(ctx context.Context, id int, actor Actor, dryRun bool) (*Result, error) {
	return act.Finish(e.forward(ctx, id, actor, dryRun, true))
}

// NextFrom is Next of seen, the issue as the caller read it: under tx,
// the issue's lock, which NextFrom releases (issues.Store.TryBegin), or,
// with tx nil, without the lock, and then the move is made only if
// nobody changed the issue since.
func (e *Engine) NextFrom(ctx context.Context, tx *issues.Tx, seen *issues.Issue, actor Actor, dryRun bool) (*Result, error) {
	return act.Finish(e.forwardIn(ctx, tx, seen, actor, dryRun, false, nil))
}

// forward is next and approve: it checks who may act, then runs one
// transition under the issue's lock (docs/ARCHITECTURE.md §4: lock, re-read, compare the
// version, gate, commit, complete, enter). With the lock free, as it
// nearly always is, the issue is read once, under the lock, for both;
// held by another process, it is read without the lock to say who may
// act, and again under the lock for the move.
func (e *Engine) forward(ctx context.Context, id int, actor Actor, dryRun, approve bool) (*Result, error) {
	tx, seen, err := e.Store.TryBegin(id)
	if err != nil {
		return nil, err
	}
	if tx == nil {
		if seen, err = e.Store.Get(id); err != nil {
			return nil, err
		}
	}
	return e.forwardIn(ctx, tx, seen, actor, dryRun, approve, nil)
}

// forwardFrom is forward from seen, the issue as the caller read it
// without the lock: the move is made only if nobody changed the issue
// since.
func (e *Engine) forwardFrom(ctx context.Context, seen *issues.Issue, actor Actor, dryRun, approve bool, then Then) (*Result, error) {
	return e.forwardIn(ctx, nil, seen, actor, dryRun, approve, then)
}

// forwardIn is forward from seen: read under tx's lock, which it
// releases, or, with tx nil, without the lock, which is then taken once
// the actor may act, the issue read again under it. then, when set, is
// called with the move's result before the lock is released.
func (e *Engine) forwardIn(ctx context.Context, tx *issues.Tx, seen *issues.Issue, actor Actor, dryRun, approve bool, then Then) (*Result, error) {
	if tx != nil {
		defer tx.Unlock()
	}
	id := seen.ID
	if res := alreadyDone(seen, actor); res != nil {
		return res, nil
	}
	flow, node, err := e.locate(seen)
	if err != nil {
		return nil, err
	}
	base := Result{Issue: id, From: seen.Stage, To: seen.Stage, Version: seen.Version, Reasons: []string{}, DryRun: dryRun,
		Review: node.HumanReview()}
	why, err := act.Admit(actor, node, seen, approve, afterReview(flow, node))
	switch {
	case err != nil:
		return nil, err
	case why != "":
		base.Status, base.Reasons = StatusWaiting, []string{why}
		if seen.Escalated != nil {
			base.Status, base.Escalated = StatusEscalated, seen.Escalated
		}
		return &base, nil
	}

	iss := seen
	if tx == nil {
		if tx, iss, err = e.Store.Begin(ctx, id); err != nil {
			return nil, err
		}
		defer tx.Unlock()
		if res := alreadyDone(iss, actor); res != nil {
			return res, nil // the request won the race to the lock in another process
		}
		if iss.Version != seen.Version {
			conflict := &issues.ConflictError{ID: id, Expected: seen.Version, Found: iss.Version}
			base.Status, base.Conflict, base.Reasons = StatusWaiting, true, []string{conflict.Error() + notice.LastChange(iss)}
			return &base, nil
		}
	}
	res, err := transition.New(ctx, e.deps, tx, actor, dryRun, e.Machine(flow).Start(node.Path)).Forward(iss, flow, node, approve, base)
	if then != nil && err == nil && res != nil {
		act.Finish(res, nil)
		then(tx, res)
	}
	return res, err
}

// alreadyDone is the Result of actor's request when iss's history
// records it: a retry (the controller moved the issue and died before
// answering, or a second process with the same request) changes nothing,
// and is told what the request did. nil when the history does not have
// it. History is only ever appended to, so an entry found without the
// lock stands; one not found is looked for again under it.
func alreadyDone(iss *issues.Issue, actor Actor) *Result {
	if actor.Request == "" {
		return nil
	}
	i := slices.IndexFunc(iss.History, func(h issues.HistoryEntry) bool { return h.Request == actor.Request })
	if i < 0 {
		return nil
	}
	h := iss.History[i]
	return &Result{Issue: iss.ID, From: h.From, To: h.To, Kind: h.Kind, Status: StatusDone, Reasons: []string{}, Version: iss.Version,
		Done: &Done{Entry: h, Stage: iss.Stage}}
}

// afterReview reports whether a human review comes before node in flow.
func afterReview(flow *stages.Flow, node *stages.Node) bool {
	i := flow.Index(node.Path)
	return i > 0 && prhead.ReviewOf(flow, flow.Nodes[i-1]) != nil
}
