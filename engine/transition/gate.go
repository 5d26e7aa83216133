package transition

import (
	"fmt"
	"os"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/approval"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// decision is what the gate of a move decided: the move to make (the one
// asked for, or where a hook sent the issue instead), or why none is made.
type decision struct {
	// status is StatusAdvanced when hop may be made, else StatusBlocked or
	// StatusWaiting (a spent rollback budget: a person decides).
	status  act.Status
	hop     hop
	reasons []string
	said    said
	// wait is the first gate hook still waiting (CI running), when
	// nothing else holds the issue: the decision is then StatusWaiting.
	wait *hooks.Outcome
}

// decide runs the gate of node→to: output files, then the pre_completion
// hooks in order (every failure collected; a hook that sends the issue
// elsewhere ends the gate), then the rollback decision of node's
// completion hooks.
func (t *Transition) decide(iss *issues.Issue, node, to *stages.Node, kind stages.Move) decision {
	if err := t.run.Check(to.Path, kind); err != nil {
		return decision{status: act.StatusBlocked, reasons: []string{err.Error()}}
	}
	seq := t.sequence(node, iss, policy.Gate(node))
	d := t.choose(seq, node, to, kind)
	d.said = seq.said // what every hook that ran said, whatever was decided
	return d
}

// choose is decide's verdict, from the hooks seq runs.
func (t *Transition) choose(seq *sequence, node, to *stages.Node, kind stages.Move) decision {
	var d decision
	reasons, jump, wait := t.gate(seq, node, to)
	switch {
	case jump != nil:
		target, ok := t.d.Config.Node(jump.Target)
		if !ok {
			return d.block(fmt.Sprintf("a hook sent the issue to unknown stage %q", jump.Target))
		}
		h := hop{from: node, to: target, kind: policy.JumpKind(jump.Kind), reason: policy.JumpReason(*jump), outputs: seq.outputs, failure: policy.FailureOf(*jump, seq.snap)}
		if err := t.run.Check(target.Path, h.kind); err != nil {
			return d.block(err.Error())
		}
		// What else the gate found is worth knowing on the way back.
		return decision{status: act.StatusAdvanced, hop: h, reasons: append([]string{h.reason}, reasons...)}
	case wait != nil:
		// Only waiting holds the issue: no verdict yet, nothing to fix.
		return decision{status: act.StatusWaiting, reasons: reasons, wait: wait}
	case len(reasons) > 0:
		return d.block(reasons...)
	}
	back, why, stop := t.decideRollback(seq, node, to)
	switch {
	case stop:
		return decision{status: act.StatusWaiting, reasons: []string{why}}
	case back == nil:
		return decision{status: act.StatusAdvanced, hop: hop{from: node, to: to, kind: kind, reason: "gates passed", outputs: seq.outputs}}
	}
	if err := t.run.Check(back.Path, stages.MoveRollback); err != nil {
		return d.block(err.Error())
	}
	return decision{status: act.StatusAdvanced, reasons: []string{why},
		hop: hop{from: node, to: back, kind: stages.MoveRollback, reason: why, outputs: seq.outputs}}
}

func (d decision) block(reasons ...string) decision {
	d.status, d.reasons = act.StatusBlocked, append(d.reasons, reasons...)
	return d
}

// gate checks what guards leaving node for to, in order. It returns every
// failure, or the outcome of a hook that sent the issue elsewhere; wait is
// the first hook still waiting, when no hook failed.
func (t *Transition) gate(seq *sequence, node, to *stages.Node) (reasons []string, jump, wait *hooks.Outcome) {
	outputs, entries := node.Leaving(to)
	failed := false
	for _, f := range outputs {
		if why := missingOutput(seq.snap, f); why != "" {
			reasons, failed = append(reasons, node.Path+": "+why), true
		}
	}
	for _, h := range entries {
		if t.approving && approval.Checks(t.d.Hooks, h) {
			continue // the approval a dry run previews (approval.Preview)
		}
		o := seq.run(h)
		switch {
		case policy.Jumps(o):
			return reasons, &o, nil
		case o.Kind == hooks.KindFail, o.Kind == hooks.KindEscalate:
			reasons, failed = append(reasons, o.Reason), true
		case o.Kind == hooks.KindPending:
			reasons = append(reasons, fmt.Sprintf("%s: still waiting (%s)", h.Label(), o.Reason))
			if wait == nil {
				wait = &o
			}
		}
	}
	if failed {
		wait = nil
	}
	return reasons, nil, wait
}

// decideRollback runs the completion hooks of node that may roll the
// issue back (their spec says so) before the move is written, so a review
// loop sends the issue back instead of forward and back. A spent rollback
// budget stops an agent (waiting on a person); a person's `next` is the
// decision to move on.
func (t *Transition) decideRollback(seq *sequence, node, to *stages.Node) (back *stages.Node, why string, stop bool) {
	for _, h := range node.Completed(to) {
		if !t.rollsBack(h) {
			continue
		}
		o := seq.run(h)
		switch o.Kind {
		case hooks.KindRollback:
			target, ok := t.d.Config.Node(o.Target)
			if !ok {
				return nil, fmt.Sprintf("rollback names unknown stage %q", o.Target), true
			}
			return target, o.Reason, false
		case hooks.KindFail:
			if t.actor.Kind == act.ActorHuman {
				seq.said.warn(o.Reason + " (moving on: a person decided)")
				continue
			}
			return nil, o.Reason, true
		}
	}
	return nil, "", false
}

// rollsBack reports whether the hook of h may roll an issue back: such
// completion hooks are decided before the move is written.
func (t *Transition) rollsBack(h *stages.HookEntry) bool {
	spec, ok := t.d.Hooks.Hook(h.Name)
	return ok && spec.Moves(stages.MoveRollback)
}

// missingOutput says what is wrong with a stage's output file, or "" when
// it is a file in the issue's directory.
func missingOutput(snap *hooks.Issue, name string) string {
	path, err := snap.File(name)
	if err != nil {
		return "output file " + err.Error()
	}
	switch fi, err := os.Stat(path); {
	case err != nil:
		return fmt.Sprintf("output file %s is missing; write it in %s", name, snap.Dir)
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("output file %s is not a regular file; write the document at that path in %s", name, snap.Dir)
	}
	return ""
}
