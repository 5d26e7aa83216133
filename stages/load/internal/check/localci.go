package check

import (
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// checkLocalCI warns of the local forge with no `ci.command` in a
// pipeline that waits for CI: its CI runs nothing, its one check is
// skipped, and a skipped check counts as passed, so every head passes CI
// untested. It is a warning (a pipeline may mean to try the flow without
// tests), said at the first hook that takes CI's verdict.
func (v *validator) checkLocalCI() {
	if v.d.Errors() > 0 || v.cfg.Forge != stages.ForgeLocal || v.cfg.CI.Command != "" {
		return
	}
	ci := v.declares(v.recorders(func(s stages.HookSpec) bool { return slices.Contains(s.Outputs, stages.CIPassedSHA) }))
	for _, f := range v.cfg.Flows {
		for _, n := range f.Nodes {
			if i := slices.IndexFunc(n.EveryHook(), ci); i >= 0 {
				h := n.EveryHook()[i]
				v.d.Warnf(h.Pos, "set the command that tests the code, e.g. `ci: {command: go test ./...}`",
					"`forge: local` has no `ci.command`: its CI runs nothing, and `%s` in %s passes every head untested (its one check is skipped)",
					h.Name, n.Path)
				return
			}
		}
	}
}
