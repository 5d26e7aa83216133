package engine

import (
	"cmp"
	"maps"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// runHook runs one hook for a transition, records what it asked to keep
// (its watch state and documents; not in a dry run) and routes a failure
// (route). It also returns why an outcome calls a person, if it does.
func (t *transition) runHook(h *stages.HookEntry, snap *hooks.Issue, node *stages.Node, r routing) (hooks.Outcome, called) {
	start := time.Now()
	o := t.e.Hooks.Run(t.ctx, h, snap, t.e.hookEnv(t.dryRun))
	t.e.Log.Debug("hook", "issue", snap.ID, "hook", h.Name, "outcome", o.Kind, "class", o.Class, "took", time.Since(start))
	if !t.dryRun {
		o.Warnings = append(o.Warnings, t.record(snap, o)...)
	}
	return t.route(h, o, snap, node, r)
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
	t    *transition
	node *stages.Node
	// routing says which failures go to the stage's on_failure.
	routing routing
	snap    *hooks.Issue
	outputs map[string]string
	said    said
}

func (t *transition) sequence(node *stages.Node, iss *issues.Issue, r routing) *sequence {
	return &sequence{t: t, node: node, routing: r, snap: t.snapshot(iss), outputs: map[string]string{}}
}

// run runs one hook: what it said is kept, its outputs go to the hooks
// after it.
func (s *sequence) run(h *stages.HookEntry) hooks.Outcome {
	o, why := s.t.runHook(h, s.snap, s.node, s.routing)
	var notes []string
	if o.Message != "" && o.Kind == hooks.KindPass {
		notes = []string{o.Message}
	}
	s.said.hook(notes, o.Warnings)
	s.said.send = append(s.said.send, o.Send...)
	if o.Kind == hooks.KindEscalate {
		s.said.escalate(s.node, cmp.Or(why.kind, issues.EscalatedHook), h.Label()+": "+o.Reason, why.failure)
	}
	if head := o.Outputs["head_sha"]; head != "" && head != s.snap.HeadSHA && s.snap.PRNumber > 0 {
		// A new head (a push, a rebase): what a cache of the forge holds
		// of the PR is stale for the hooks after this one.
		if c, ok := forge.As[forge.Cache](s.t.e.Forge); ok {
			c.Forget(s.snap.PRNumber)
		}
	}
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
