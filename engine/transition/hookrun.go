package transition

import (
	"cmp"
	"maps"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// runHook runs one hook for a transition (policy.Runner): what it asked
// to keep is kept, and a failure routed. It also says why the outcome
// calls a person, if it does.
func (t *Transition) runHook(h *stages.HookEntry, snap *hooks.Issue, node *stages.Node, r policy.Routing) (hooks.Outcome, policy.Called) {
	run := &policy.Runner{Config: t.d.Config, Hooks: t.d.Hooks, Env: t.d.Env(t.dryRun), Log: t.d.Log, Tx: t.tx,
		Controller: t.actor.Kind == act.ActorController, DryRun: t.dryRun}
	return run.Run(t.ctx, h, snap, node, r)
}

// sequence runs the hooks of one list in order, each seeing the outputs
// of those before it. Each step of a transition makes its own.
type sequence struct {
	t    *Transition
	node *stages.Node
	// routing says which failures go to the stage's on_failure.
	routing policy.Routing
	snap    *hooks.Issue
	outputs map[string]string
	said    said
}

func (t *Transition) sequence(node *stages.Node, iss *issues.Issue, r policy.Routing) *sequence {
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
		if c, ok := forge.As[forge.Cache](s.t.d.Forge()); ok {
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
