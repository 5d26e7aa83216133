package check

import (
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// checkNodesPush errors, with state.nodes, where a controller's stage
// pushes the branch (create_pr) in a flow in which no stage of
// the agents before it pushes it: the controller's host has none of the
// commits the agent made on its node, and would open a PR of nothing
// (docs/ARCHITECTURE.md §8, Nodes). It is said once, at the first such
// hook.
func (v *validator) checkNodesPush() {
	if v.d.Errors() > 0 || !v.cfg.State.Nodes.On {
		return
	}
	pushes := v.declares(v.recorders(func(s stages.HookSpec) bool { return s.Pushes }))
	for _, f := range v.cfg.Flows {
		pushed := false
		for _, n := range f.Nodes {
			i := slices.IndexFunc(n.EveryHook(), pushes)
			switch {
			case i < 0:
			case !n.Controller():
				pushed = true
			case !pushed:
				h := n.EveryHook()[i]
				v.d.Errorf(h.Pos, "add `- push_branch:` to the pre_completion of the agent's stage that hands the issue over",
					"`%s` in %s pushes the issue's branch from the controller's host, but with state.nodes the agent's commits are on its node: no stage of the agents before it in flow %s pushes them", h.Name, n.Path, f.Name)
				return
			}
		}
	}
}
