package load_test

import (
	"slices"

	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
)

// catalog is the set of hooks the tests load configs against: the real one.
func catalog() stages.HookCatalog { return builtin.Registry() }

// withSpecs is the real catalog with the specs of some hooks replaced or
// added: the traits a test is about, fixed in the test, so that it does
// not depend on how the hooks declare them today.
func withSpecs(specs ...stages.HookSpec) stages.HookCatalog {
	c := fixedSpecs{HookCatalog: catalog(), specs: map[string]stages.HookSpec{}}
	for _, s := range specs {
		c.specs[s.Name] = s
	}
	return c
}

type fixedSpecs struct {
	stages.HookCatalog
	specs map[string]stages.HookSpec
}

func (c fixedSpecs) Hook(name string) (stages.HookSpec, bool) {
	if s, ok := c.specs[name]; ok {
		return s, true
	}
	return c.HookCatalog.Hook(name)
}

func (c fixedSpecs) HookNames() []string {
	names := c.HookCatalog.HookNames()
	for name := range c.specs {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// policyCatalog fixes the hooks the failure policy tests use: a message to
// the agent, a rebase that resolves conflicts, a hook that finds them, and
// one that watches a PR.
func policyCatalog() stages.HookCatalog {
	return withSpecs(
		stages.HookSpec{Name: "send_message", Main: "message",
			Params: []stages.Param{{Name: "message", Type: stages.ParamTemplate, Required: true}}},
		stages.HookSpec{Name: "rebase", Resolves: true, Outputs: []string{"conflict_files", "head_sha"}},
		checkConflicts(true, false),
		stages.HookSpec{Name: "poll_pr_status", Watches: true, Params: []stages.Param{
			{Name: "interval", Type: stages.ParamDuration},
			{Name: "on_ci_failure", Type: stages.ParamAny},
			{Name: "on_conflict", Type: stages.ParamAny},
		}},
	)
}

// checkConflicts is check_conflicts' spec as it may stand while the
// hooks move on_conflict from a parameter to an option: marked as a
// hook that finds conflicts or not, with the old parameter or without.
func checkConflicts(conflicts, param bool) stages.HookSpec {
	s := stages.HookSpec{Name: "check_conflicts", Conflicts: conflicts,
		Params: []stages.Param{{Name: "auto_rebase", Type: stages.ParamBool}}}
	if param {
		s.Params = append(s.Params, stages.Param{Name: "on_conflict", Type: stages.ParamEnum,
			Enum: []string{"fail", "step_back", "escalate"}, Default: "fail"})
	}
	return s
}
