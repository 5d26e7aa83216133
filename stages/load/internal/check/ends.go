package check

import (
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// Unending is a warning for each flow of cfg when no stage of it has
// `terminal:`: an issue is then never done, and stays at its flow's last
// stage with nothing to move it on. A config that declares an end has
// each flow checked as it loads (checkFlowEnds); one that declares none
// loads, as the earlier tool's did, and `agenttree validate` says this.
func Unending(cfg *stages.Config) []stages.Diagnostic {
	for _, s := range cfg.Stages {
		if slices.ContainsFunc(s.Nodes(), isTerminal) {
			return nil
		}
	}
	var out []stages.Diagnostic
	for _, f := range cfg.Flows {
		if !slices.ContainsFunc(f.Nodes, isWork) {
			continue // reported as a flow of parking lots
		}
		last := lastReached(f)
		out = append(out, stages.Diagnostic{Pos: f.Pos, Severity: stages.SevWarning,
			Msg:  fmt.Sprintf("flow %q has no terminal stage, nor has any stage of the pipeline: an issue on it is never done, and stays at %s for good", f.Name, last.Path),
			Hint: endHint(cfg.Form, last)})
	}
	return out
}

// lastReached is the last node of f that `next` moves an issue to: a
// redirect_only one after it is reached only by a redirect.
func lastReached(f *stages.Flow) *stages.Node {
	for i := len(f.Nodes) - 1; i > 0; i-- {
		if !f.Nodes[i].RedirectOnly() {
			return f.Nodes[i]
		}
	}
	return f.Nodes[0]
}

// endHint is the fix for a flow that ends at last, spelt the way the
// file is: the map form's key for the end is the earlier tool's
// `is_completion`, and its last parking lot (`accepted`) is where that
// tool's issues ended.
func endHint(form stages.Form, last *stages.Node) string {
	switch {
	case form != stages.Compatible:
		return "add the stage issues end in, last in `stages:` (and in each flow of `flows:`): `- name: accepted` with `terminal: completion`"
	case last.ParkingLot() && last.Sub == nil:
		return fmt.Sprintf("if issues are done there, give %s `is_completion: true`", last.Path)
	}
	return "add the stage issues end in, last in the flow's stages (and in each other flow's list): `accepted: {is_completion: true}`"
}
