package engine

import (
	"cmp"
	"maps"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// runHook runs one hook for a transition (policy.Runner): what it asked
// to keep is kept, and a failure routed. It also says why the outcome
// calls a person, if it does.
func (t *transition) runHook(h *stages.HookEntry, snap *hooks.Issue, node *stages.Node, r policy.Routing) (hooks.Outcome, policy.Called) {
	run := &policy.Runner{Config: t.e.Config, Hooks: t.e.Hooks, Env: t.e.hookEnv(t.dryRun), Log: t.e.Log, Tx: t.tx,
		Controller: t.actor.Kind == ActorController, DryRun: t.dryRun}
	return run.Run(t.ctx, h, snap, node, r)
}

// sequence runs the hooks of one list in order, each seeing the outputs
// of those before it. Each step of a transition makes its own.
type sequence struct {
	t    *transition
	node *stages.Node
	// routing says which failures go to the stage's on_failure.
	routing policy.Routing
	snap    *hooks.Issue
	outputs map[string]string
	said    said
}

func (t *transition) sequence(node *stages.Node, iss *issues.Issue, r policy.Routing) *sequence {
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
		s.said.escalate(s.node, cmp.Or(why.Kind, issues.EscalatedHook), h.Label()+": "+o.Reason, why.Failure)
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
