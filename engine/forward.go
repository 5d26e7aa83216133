package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
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

// transition is one command's work on one issue, made while holding its
// lock: every write goes through tx, so no other agenttree process
// interleaves. Its steps return values; the command's Result is built from
// them once.
type transition struct {
	e      *Engine
	ctx    context.Context
	tx     *issues.Tx
	actor  Actor
	dryRun bool
	// run is the stage machine standing where the issue is: it says which
	// moves are legal from there, and records those written.
	run *machine.Run
	// approving: a dry run of a person's approval on a forge where the
	// approval is agenttree's to record; the gate counts it as made.
	approving bool
}

// snapshot is the hooks' view of iss with the watch state held by the issues.Tx.
func (t *transition) snapshot(iss *issues.Issue) *hooks.Issue {
	s := t.e.Snapshot(iss)
	w, err := t.tx.Watch()
	if err != nil {
		t.e.Log.Warn("unreadable watch state; starting afresh", "issue", iss.ID, "err", err)
		w = map[string]string{}
	}
	s.Watch = w
	return s
}

// NextFrom is Next of seen, the issue as the caller read it: under tx,
// the issue's lock, which NextFrom releases (issues.Store.TryBegin), or,
// with tx nil, without the lock, and then the move is made only if
// nobody changed the issue since.
func (e *Engine) NextFrom(ctx context.Context, tx *issues.Tx, seen *issues.Issue, actor Actor, dryRun bool) (*Result, error) {
	return act.Finish(e.forwardIn(ctx, tx, seen, actor, dryRun, false))
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
	return e.forwardIn(ctx, tx, seen, actor, dryRun, approve)
}

// forwardFrom is forward from seen, the issue as the caller read it
// without the lock: the move is made only if nobody changed the issue
// since.
func (e *Engine) forwardFrom(ctx context.Context, seen *issues.Issue, actor Actor, dryRun, approve bool) (*Result, error) {
	return e.forwardIn(ctx, nil, seen, actor, dryRun, approve)
}

// forwardIn is forward from seen: read under tx's lock, which it
// releases, or, with tx nil, without the lock, which is then taken once
// the actor may act, the issue read again under it.
func (e *Engine) forwardIn(ctx context.Context, tx *issues.Tx, seen *issues.Issue, actor Actor, dryRun, approve bool) (*Result, error) {
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
			base.Status, base.Conflict, base.Reasons = StatusWaiting, true, []string{conflict.Error() + lastChange(iss)}
			return &base, nil
		}
	}
	t := &transition{e: e, ctx: ctx, tx: tx, actor: actor, dryRun: dryRun, run: e.Machine(flow).Start(node.Path)}
	f, err := t.move(iss, flow, node, approve)
	if err != nil {
		return nil, err
	}
	res := f.result(base, dryRun)
	if res.Status == StatusBlocked && res.Instructions == "" && notice.SteppedBackTo(iss, node) {
		// Back here for a failure, and not through yet: what to do about
		// that kind of failure is worth saying again.
		res.Instructions = e.Instructions(node, iss)
	}
	if res.Conflict && len(res.Reasons) > 0 {
		if cur, err := tx.Get(); err == nil {
			res.Reasons[len(res.Reasons)-1] += lastChange(cur)
		}
	}
	if !dryRun {
		if err := t.settle(f, &res, len(iss.History)); err != nil {
			return nil, err
		}
	}
	return &res, nil
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

// move decides the move of a locked issue and drives it. Each step
// returns what it found; findings.result makes the Result of them.
func (t *transition) move(iss *issues.Issue, flow *stages.Flow, node *stages.Node, approve bool) (findings, error) {
	f := findings{issue: iss}
	var pr *forge.PR
	if t.actor.Kind == ActorHuman && (node.HumanReview() || approve) {
		// A head CI did not pass goes back through CI, never to a merge
		// that refuses it.
		var head string
		pr, head = t.prHead(iss)
		if rc := prhead.Stale(t.e.Hooks, flow, node, iss, head); rc != nil {
			return t.sendBack(iss, rc)
		}
	}
	if approve && !node.HumanReview() {
		// A person approves again what changed after the review (the merge
		// on entering this stage refused unapproved commits).
		var err error
		if t.dryRun {
			f.approval.notes = append(f.approval.notes, t.previewReapproval(iss, pr, flow, node))
			f.final = fmt.Sprintf("issue %d stays at %s: a dry run approves nothing and runs nothing", iss.ID, node.Path)
			return f, nil
		}
		if f.issue, f.approval, err = t.approveAgain(iss, flow, node, pr); err != nil {
			return f, err
		}
	}
	// Entry hooks that did not finish when the issue arrived (a push that
	// failed, a merge refused) run again before anything else, terminal
	// stages included.
	if act.EntryPendingAt(f.issue, node) {
		if t.dryRun {
			f.unfinished = node.Path
			return f, nil
		}
		if done := t.resume(&f, node); done {
			return f, nil
		}
		if why := act.WaitReason(t.actor, node, f.issue.ID); why != "" && node.Terminal() == stages.TerminalNone {
			// The controller finished entry work at a stage it does not
			// own: whoever works there moves the issue on.
			f.wait = why
			return f, nil
		}
	}
	if term := node.Terminal(); term != stages.TerminalNone {
		f.final = fmt.Sprintf("issue %d is done: %s is a terminal (%s) stage", f.issue.ID, node.Path, term)
		return f, nil
	}
	if t.actor.Kind == ActorController && node.HumanReview() {
		// The controller's hooks of a review stage have run; a person
		// approves.
		f.wait = fmt.Sprintf("%s waits for a person's review: `agenttree approve %d`", node.Path, f.issue.ID)
		return f, nil
	}
	to, skipped, err := flow.Next(node.Path, t.e.Snapshot(f.issue).CondVars())
	if err != nil {
		return f, err
	}
	f.skipped = skipped
	if to == nil {
		f.final = fmt.Sprintf("issue %d is at %s, the last stage of flow %q", f.issue.ID, node.Path, flow.Name)
		return f, nil
	}
	want := hop{from: node, to: to, kind: machine.Forward(node)}
	if want.kind == stages.MoveApprove {
		// The approval is of the head the person was shown, CI passed on
		// it (prhead.Stale), and the move out of the review records it,
		// whatever hooks the review declares: merge_pr merges that head.
		f.approval.warn(t.approvePR(f.issue)...)
		want.outputs = approvalOf(pr)
		if t.dryRun {
			f.approval.notes = append(f.approval.notes, t.previewApproval(f.issue, pr, node, to))
		}
	}
	j := t.drive(f.issue, node, want, true)
	f.journey = &j
	return f, nil
}

// resume reruns the entry hooks of node, which did not finish when the
// issue arrived, into f. It reports whether that is all the command does:
// the hooks still fail or wait, or one of them moved the issue on (that is
// then the command's move).
func (t *transition) resume(f *findings, node *stages.Node) (done bool) {
	from, _ := t.e.Config.Node(f.issue.EntryPending.From)
	a := t.enter(f.issue, from, node)
	f.resumed, f.issue = &a, a.issue
	if a.next != nil {
		j := t.drive(a.issue, node, *a.next, false)
		f.journey = &j
		return true
	}
	return len(a.failures) > 0 || a.waiting != nil || (node.Controller() && t.actor.Kind != ActorController)
}

// approvePR records a person's approval on the PR where the forge takes it
// from agenttree, so the review gate sees it. It returns what went wrong,
// as warnings. A forge is opened only when there is a PR to approve.
func (t *transition) approvePR(iss *issues.Issue) []string {
	if iss.PRNumber == 0 || t.dryRun {
		return nil
	}
	ap, ok := forge.As[forge.Approver](t.e.Forge)
	if !ok {
		return nil
	}
	if err := ap.Approve(t.ctx, iss.PRNumber, string(ActorHuman)); err != nil {
		return []string{fmt.Sprintf("could not record the approval on PR #%d: %v", iss.PRNumber, err)}
	}
	return nil
}

// lastChange names who changed iss last, for a command that lost the race
// to it.
func lastChange(iss *issues.Issue) string {
	if len(iss.History) == 0 {
		return ""
	}
	h := iss.History[len(iss.History)-1]
	return fmt.Sprintf(" (last change: %s %s → %s by the %s at %s)", h.Kind, h.From, h.To, h.Actor, h.At.Format("15:04:05"))
}

// afterReview reports whether a human review comes before node in flow.
func afterReview(flow *stages.Flow, node *stages.Node) bool {
	i := flow.Index(node.Path)
	return i > 0 && prhead.ReviewOf(flow, flow.Nodes[i-1]) != nil
}
