package engine

import (
	"fmt"
	"maps"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// runHook runs one hook for a transition, records what it asked to keep
// (its watch state and documents; not in a dry run) and applies its
// on_failure policy.
func (t *transition) runHook(h *stages.HookEntry, snap *hooks.Issue, node *stages.Node) hooks.Outcome {
	start := time.Now()
	o := t.e.Hooks.Run(t.ctx, h, snap, t.e.hookEnv(t.dryRun))
	t.e.Log.Debug("hook", "issue", snap.ID, "hook", h.Name, "outcome", o.Kind, "class", o.Class, "took", time.Since(start))
	if !t.dryRun {
		o.Warnings = append(o.Warnings, t.record(snap, o)...)
	}
	if o.Kind == hooks.KindStepBack && o.Target == "" {
		return stepBack(node, o, snap)
	}
	// A failure the agent cannot fix (bad credentials, an outage, a forge
	// that is not set up) is never turned into work for the agent.
	if o.Kind != hooks.KindFail || h.OnFailure == nil || !o.AgentFixable() {
		return o
	}
	switch h.OnFailure.Action {
	case stages.ActionIgnore:
		return hooks.Outcome{Kind: hooks.KindPass, Outputs: o.Outputs, Warnings: append(o.Warnings, h.Label()+" failed (ignored): "+o.Reason)}
	case stages.ActionEscalate:
		o.Kind = hooks.KindEscalate
	case stages.ActionStepBackTo:
		o.Kind, o.Target, o.Message = hooks.KindStepBack, h.OnFailure.Target, o.Reason
	case stages.ActionStepBack:
		o.Kind, o.Target = hooks.KindStepBack, ""
		return stepBack(node, o, snap)
	}
	return o
}

// stepBack sends a failure to the stage's on_failure target, with the
// stage's message filled in. Without a target it stays a failure.
func stepBack(node *stages.Node, o hooks.Outcome, snap *hooks.Issue) hooks.Outcome {
	var of *stages.OnFailure
	if node != nil {
		of = node.OnFailure()
	}
	if of == nil || of.StepBackTo == "" {
		o.Kind = hooks.KindFail
		if node != nil {
			o.Reason += fmt.Sprintf(" (no step back: %s has no on_failure.step_back_to)", node.Path)
		}
		return o
	}
	o.Target = of.StepBackTo
	switch {
	case of.Message != "":
		vars := snap.MessageVars()
		maps.Copy(vars, o.Outputs)
		vars["failure_reason"] = o.Reason
		o.Message = stages.Render(of.Message, vars)
	case o.Message == "":
		o.Message = o.Reason
	}
	return o
}

// record writes what a hook asked to keep: its watch state and documents.
// A failure to write is a warning, not a hook failure.
func (t *transition) record(snap *hooks.Issue, o hooks.Outcome) (warnings []string) {
	for name, content := range o.Files {
		if err := t.tx.WriteDoc(name, []byte(content)); err != nil {
			warnings = append(warnings, "could not write "+name+": "+err.Error())
		}
	}
	if len(o.Watch) == 0 {
		return warnings
	}
	if err := t.tx.UpdateWatch(o.Watch); err != nil {
		return append(warnings, "could not save watch state: "+err.Error())
	}
	snap.Watch, _ = t.tx.Watch()
	return warnings
}

// sequence runs the hooks of one list in order, each seeing the outputs
// of those before it. Each step of a transition makes its own.
type sequence struct {
	t       *transition
	node    *stages.Node
	snap    *hooks.Issue
	outputs map[string]string
	said    said
}

func (t *transition) sequence(node *stages.Node, iss *issues.Issue) *sequence {
	return &sequence{t: t, node: node, snap: t.snapshot(iss), outputs: map[string]string{}}
}

// run runs one hook: what it said is kept, its outputs go to the hooks
// after it.
func (s *sequence) run(h *stages.HookEntry) hooks.Outcome {
	o := s.t.runHook(h, s.snap, s.node)
	var notes []string
	if o.Message != "" && o.Kind == hooks.KindPass {
		notes = []string{o.Message}
	}
	s.said.hook(notes, o.Warnings)
	if len(o.Outputs) > 0 {
		merged := maps.Clone(s.snap.Outputs)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, o.Outputs)
		maps.Copy(s.outputs, o.Outputs)
		s.snap.Outputs = merged
	}
	return o
}

// jumps reports whether the outcome sends the issue elsewhere.
func jumps(o hooks.Outcome) bool {
	switch o.Kind {
	case hooks.KindRedirect, hooks.KindStepBack, hooks.KindRollback:
		return true
	}
	return false
}

// jumpKind is the move an outcome that jumps makes.
func jumpKind(k hooks.Kind) stages.Move {
	switch k {
	case hooks.KindStepBack:
		return stages.MoveStepBack
	case hooks.KindRollback:
		return stages.MoveRollback
	}
	return stages.MoveRedirect
}

// jumpReason is what the history says of a jump: a step back's message for
// the agent, else the hook's reason.
func jumpReason(o hooks.Outcome) string {
	if o.Kind == hooks.KindStepBack && o.Message != "" {
		return o.Message
	}
	return o.Reason
}
