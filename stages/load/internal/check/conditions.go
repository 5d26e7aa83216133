package check

import "slices"

// checkGateConditions warns of a gate (a human review, the controller's
// stage) skipped on a condition an agent can decide: one that reads a
// hook's output, worked out from what agents write, or a var agents may
// give an issue they create. `next` skips a stage whose condition is
// false, so such a condition is a way round the gate. It is a warning, not
// an error: the author may know the output comes from a file no agent
// writes.
func (v *validator) checkGateConditions() {
	warned := map[any]bool{}
	for _, f := range v.cfg.Flows {
		for _, n := range f.Nodes {
			gate, cond := gateOf(n), n.Condition()
			if gate == "" || cond == nil || warned[cond] {
				continue
			}
			for _, name := range cond.Names() {
				why := ""
				switch {
				case slices.Contains(v.cfg.AgentCreate.Vars, name):
					why = "a var agents may set when they create an issue (agent_create.vars)"
				case v.led.IsHookOutput(name):
					why = "an output of a hook, worked out from what agents write"
				}
				if why == "" {
					continue
				}
				warned[cond] = true
				v.d.Warnf(cond.Pos, "base a gate's condition on a var a person sets: `agenttree issue create --set NAME=VALUE`",
					"%s (%s) is skipped when its condition `%s` is false, and `%s` is %s: an agent could skip it",
					n.Path, gate, cond.Src, name, why)
				break
			}
		}
	}
}
