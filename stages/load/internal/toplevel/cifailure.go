package toplevel

import (
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
)

// readCIFailure reads ci_polling.on_failure: what a CI failure does where
// the hook that waits for CI says nothing of its own (docs/CONFIG.md,
// "Spellings from the design notes"). It is an action; a stage to step
// back to belongs to a stage or a hook, which a bare name is read from.
func readCIFailure(d *diag.Collector, n *yaml.Node) *stages.FailurePolicy {
	if n.Kind == yaml.MappingNode {
		d.Errorf(d.Pos(n), "write `ci_polling: {on_failure: step_back}` (it goes to the nearest earlier stage where an agent works), "+
			"or name the stage on the stage that waits for CI: `on_failure: {step_back_to: STAGE}`",
			"ci_polling.on_failure is an action (step_back, escalate, fail or ignore), not a stage to step back to")
		return nil
	}
	var a stages.FailureAction
	diag.OneOf(d, n, &a, "ci_polling.on_failure action", stages.ActionStepBack, stages.ActionEscalate, stages.ActionFail, stages.ActionIgnore)
	if a == "" {
		return nil
	}
	return &stages.FailurePolicy{Pos: d.Pos(n), Action: a}
}
