package check

import (
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// checkNodesPush errors, with state.nodes, when a controller's stage
// pushes the branch (create_pr) and no stage of the agents does:
// the controller's host has none of the commits the agent made on its
// node, and would open a PR of nothing (docs/ARCHITECTURE.md §8, Nodes).
func (v *validator) checkNodesPush() {
	if v.d.Errors() > 0 || !v.cfg.State.Nodes.On {
		return
	}
	pushes := v.declares(v.recorders(func(s stages.HookSpec) bool { return s.Pushes }))
	var first *stages.HookEntry
	var at string
	for _, f := range v.cfg.Flows {
		for _, n := range f.Nodes {
			i := slices.IndexFunc(n.EveryHook(), pushes)
			switch {
			case i < 0:
			case !n.Controller():
				return
			case first == nil:
				first, at = n.EveryHook()[i], n.Path
			}
		}
	}
	if first != nil {
		v.d.Errorf(first.Pos, "add `- push_branch:` to the pre_completion of the agent's stage that hands the issue over",
			"`%s` in %s pushes the issue's branch from the controller's host, but with state.nodes the agent's commits are on its node: no stage of the agents pushes them", first.Name, at)
	}
}
