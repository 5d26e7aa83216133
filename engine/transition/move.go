package transition

import (
	"fmt"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/approval"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// snapshot is the hooks' view of iss with the watch state held by the issues.Tx.
func (t *Transition) snapshot(iss *issues.Issue) *hooks.Issue {
	s := t.d.Snapshot(iss)
	w, err := t.tx.Watch()
	if err != nil {
		t.d.Log.Warn("unreadable watch state; starting afresh", "issue", iss.ID, "err", err)
		w = map[string]string{}
	}
	s.Watch = w
	return s
}

// move decides the move of a locked issue and drives it. Each step
// returns what it found; findings.result makes the Result of them.
func (t *Transition) move(iss *issues.Issue, flow *stages.Flow, node *stages.Node, approve bool) (findings, error) {
	f := findings{issue: iss}
	var pr *forge.PR
	if t.actor.Kind == act.ActorHuman && (node.HumanReview() || approve) {
		// A head CI did not pass goes back through CI, never to a merge
		// that refuses it.
		var head string
		pr, head = t.prHead(iss)
		if rc := prhead.Stale(t.d.Hooks, flow, node, iss, head); rc != nil {
			return t.sendBack(iss, rc)
		}
	}
	if approve && !node.HumanReview() {
		// A person approves again what changed after the review (the merge
		// on entering this stage refused unapproved commits).
		var err error
		if t.dryRun {
			f.approval.notes = append(f.approval.notes, approval.PreviewAgain(t.d.Forge(), t.d.Hooks, t.d.Config, iss, pr, flow, node))
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
	if t.actor.Kind == act.ActorController && node.HumanReview() {
		// The controller's hooks of a review stage have run; a person
		// approves.
		f.wait = fmt.Sprintf("%s waits for a person's review: `agenttree approve %d`", node.Path, f.issue.ID)
		return f, nil
	}
	to, skipped, err := flow.Next(node.Path, t.d.Snapshot(f.issue).CondVars())
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
		want.outputs = approval.Of(pr)
		if t.dryRun {
			what, counted := approval.Preview(t.d.Forge(), f.issue, pr, node, to)
			f.approval.notes, t.approving = append(f.approval.notes, what), counted
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
func (t *Transition) resume(f *findings, node *stages.Node) (done bool) {
	from, _ := t.d.Config.Node(f.issue.EntryPending.From)
	a := t.enter(f.issue, from, node)
	f.resumed, f.issue = &a, a.issue
	if a.next != nil {
		j := t.drive(a.issue, node, *a.next, false)
		f.journey = &j
		return true
	}
	return len(a.failures) > 0 || a.waiting != nil || (node.Controller() && t.actor.Kind != act.ActorController)
}

// approvePR records a person's approval on the PR where the forge takes it
// from agenttree, so the review gate sees it. It returns what went wrong,
// as warnings. A forge is opened only when there is a PR to approve.
func (t *Transition) approvePR(iss *issues.Issue) []string {
	if iss.PRNumber == 0 || t.dryRun {
		return nil
	}
	ap, ok := forge.As[forge.Approver](t.d.Forge())
	if !ok {
		return nil
	}
	if err := ap.Approve(t.ctx, iss.PRNumber, string(act.ActorHuman)); err != nil {
		return []string{fmt.Sprintf("could not record the approval on PR #%d: %v", iss.PRNumber, err)}
	}
	return nil
}
