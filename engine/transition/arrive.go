package transition

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// arrival is what happened once a move was written: the completion hooks
// of the stage left (for a move forward), then the entry hooks of the
// stage entered.
type arrival struct {
	issue *issues.Issue
	// next is where a hook sent the issue on from here.
	next *hop
	// failures are entry hooks that did not pass: the stage's entry is
	// unfinished, and the next `next` here runs them again.
	failures []string
	// waiting is an entry hook that is pending (CI running): the entry
	// goes on when it is called again.
	waiting      *hooks.Outcome
	instructions string
	said         said
}

// arrive runs what follows the move h, just written: for a move forward
// the completion hooks of the stage left, then the entry hooks of the
// stage entered.
func (t *Transition) arrive(iss *issues.Issue, h hop) arrival {
	var completed said
	if h.kind == stages.MoveAdvance || h.kind == stages.MoveApprove {
		a := t.complete(iss, h.from, h.to)
		if a.next != nil {
			return a
		}
		iss, completed = a.issue, a.said
	}
	entered := t.enter(iss, h.from, h.to)
	completed.add(entered.said)
	entered.said = completed
	return entered
}

// complete runs the completion hooks of node after a move to to (those
// that roll back were decided before the move). Their failures are
// warnings: the move stands.
func (t *Transition) complete(iss *issues.Issue, node, to *stages.Node) arrival {
	seq := t.sequence(node, iss, policy.RouteNone)
	var a arrival
	for _, h := range node.Completed(to) {
		if t.rollsBack(h) {
			continue
		}
		o := seq.run(h)
		if policy.Jumps(o) {
			// The issue is at to now; its entry counts as from node.
			a.next = t.onward(node, to, o, seq)
			break
		}
		if o.Blocking() {
			seq.said.warn(fmt.Sprintf("%s (post_completion of %s): %s", h.Label(), node.Path, o.Reason))
		}
	}
	var warn []string
	a.issue, warn = t.save(iss, seq.outputs, nil)
	seq.said.warn(warn...)
	a.said = seq.said
	return a
}

// onward is the move a hook asks for of an issue at issueAt, if the
// pipeline allows it: the stage it goes to is entered as if from
// enterFrom. Otherwise what was refused is said, and the issue stays.
func (t *Transition) onward(enterFrom, issueAt *stages.Node, o hooks.Outcome, seq *sequence) *hop {
	s := &seq.said
	target, ok := t.d.Config.Node(o.Target)
	if !ok {
		s.warn(fmt.Sprintf("a hook sent the issue to unknown stage %q; it stays at %s", o.Target, issueAt.Path))
		return nil
	}
	h := &hop{from: enterFrom, to: target, kind: policy.JumpKind(o.Kind), reason: policy.JumpReason(o), outputs: o.Outputs, failure: policy.FailureOf(o, seq.snap)}
	if err := t.run.Check(target.Path, h.kind); err != nil {
		s.warn(err.Error())
		return nil
	}
	return h
}

// enter runs to's entry hooks (post_start) and loads the stage's
// instructions; at a stage the controller owns, only the controller runs
// them (Reconcile). The hooks run in order from where an earlier attempt
// stopped, and stop at the first that does not pass: one pending waits
// (the controller calls again), one failing leaves the entry unfinished.
// A hook that moves the PR's head starts them again (prhead.Cursor). What
// is left is kept on the issue, in the same write as the outputs.
func (t *Transition) enter(iss *issues.Issue, from, to *stages.Node) arrival {
	if to.Controller() && t.actor.Kind != act.ActorController {
		return arrival{issue: iss, instructions: fmt.Sprintf("%s is run by the host controller; `agenttree controller` takes the issue from here.", to.Path)}
	}
	seq := t.sequence(to, iss, policy.Entry(to))
	list := to.Entering(from)
	cur, why := prhead.CursorOf(iss, to, len(list))
	if why != "" {
		seq.said.hook([]string{why}, nil)
	}
	var a arrival
	a.steps(t, to, list, seq, &cur)
	if a.next != nil {
		// The stage is left at once: what it said stays said, its
		// outputs go with it, and what follows is the next stage's.
		var warn []string
		a.issue, warn = t.save(iss, seq.outputs, nil)
		seq.said.warn(warn...)
		a.failures, a.said = nil, seq.said
		return a
	}
	var warn []string
	a.issue, warn = t.finishEntry(iss, seq.outputs, a.failures, cur, len(list))
	seq.said.warn(warn...)
	a.said = seq.said
	a.instructions = t.d.Notices.Instructions(to, a.issue)
	return a
}

// step runs one entry hook of to into a, and reports whether it passed
// (the sequence goes on).
func (a *arrival) step(t *Transition, to *stages.Node, h *stages.HookEntry, seq *sequence) bool {
	o := seq.run(h)
	switch {
	case policy.Jumps(o) && o.Target == to.Path:
		// Stepping back to the stage being entered would enter it
		// again, and fail again: it is a failed entry.
		a.failures = append(a.failures, fmt.Sprintf("%s (post_start of %s): %s", h.Label(), to.Path, o.Reason))
	case policy.Jumps(o):
		if a.next = t.onward(to, to, o, seq); a.next == nil {
			a.failures = append(a.failures, fmt.Sprintf("%s (post_start of %s) asked to move the issue to %s, which the pipeline does not allow", h.Label(), to.Path, o.Target))
		}
	case o.Kind == hooks.KindPending:
		a.waiting = &o
	case o.Blocking():
		a.failures = append(a.failures, fmt.Sprintf("%s (post_start of %s): %s", h.Label(), to.Path, o.Reason))
	default:
		return true
	}
	return false
}

// steps runs the entry hooks list of to from cur on, into a, until one
// does not pass or the issue leaves the stage; a hook that moves the head
// under the hooks done before it starts them again (once in a call; the
// next call goes on after a second move).
func (a *arrival) steps(t *Transition, to *stages.Node, list []*stages.HookEntry, seq *sequence, cur *prhead.Cursor) {
	for cur.Done < len(list) {
		h := list[cur.Done]
		passed := a.step(t, to, h, seq)
		if a.next != nil {
			return
		}
		if why := cur.Moved(cmp.Or(seq.outputs["head_sha"], seq.snap.HeadSHA), to); why != "" {
			why = h.Label() + ": " + why
			seq.said.hook([]string{why}, nil)
			if passed && !cur.Restarted {
				cur.Restarted = true
				continue
			}
			if passed {
				o := hooks.Pending(t.d.Config.CIPolling.PollInterval, why)
				a.waiting = &o
			}
			return
		}
		if !passed {
			return
		}
		cur.Done++
	}
}

// finishEntry saves the entry hooks' outputs and what is still pending
// (the cursor: how many of total hooks passed, and on which head), in one
// write.
func (t *Transition) finishEntry(iss *issues.Issue, outputs map[string]string, failures []string, cur prhead.Cursor, total int) (*issues.Issue, []string) {
	var pending *issues.EntryPending
	if iss.EntryPending != nil && cur.Done < total {
		p := *iss.EntryPending
		p.Done, p.Failures, p.Head = cur.Done, failures, ""
		if cur.Done > 0 {
			p.Head = cur.On
		}
		pending = &p
	}
	if !policy.Changes(iss, outputs) && equalPending(pending, iss.EntryPending) {
		return iss, nil
	}
	return t.save(iss, outputs, func(i *issues.Issue) { i.EntryPending = pending })
}

func equalPending(a, b *issues.EntryPending) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Stage == b.Stage && a.From == b.From && a.Done == b.Done && a.Head == b.Head && slices.Equal(a.Failures, b.Failures)
}

// reapprove records a person's approval of the PR as it is now, for an
// issue whose entry hooks (a merge) refused commits pushed after the
// review. It is a history entry, not a move. The approval check is the
// hook whose spec says it is one.
func (t *Transition) reapprove(iss *issues.Issue, node *stages.Node) (*issues.Issue, said, error) {
	var s said
	if t.dryRun {
		return iss, s, nil
	}
	s.warn(t.approvePR(iss)...)
	name, err := t.d.Hooks.With("checks approvals", func(spec stages.HookSpec) bool { return spec.Approval })
	if err != nil {
		s.warn(err.Error())
		return iss, s, nil
	}
	o, _ := t.runHook(&stages.HookEntry{Name: name, Params: map[string]any{}}, t.snapshot(iss), node, policy.RouteNone)
	s.warn(o.Warnings...)
	if o.Kind != hooks.KindPass {
		s.warn("the PR is still not approved: " + o.Reason)
		return iss, s, nil
	}
	return t.recordReapproval(iss, o.Outputs, s)
}

// isConflict reports whether err is a lost compare-and-swap.
func isConflict(err error) bool {
	var ce *issues.ConflictError
	return errors.As(err, &ce)
}
