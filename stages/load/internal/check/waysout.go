package check

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/stages"
)

// checkWaysOut warns of hooks the controller runs whose failures lead
// nowhere. Nobody watches the controller work: a failure that neither
// steps the issue back nor calls a person stops the issue until someone
// looks, so the config should say where it goes. The rule is the
// engine's (machine.StepBackTarget): the hook's own on_failure, else the
// step back of the node it runs in (its on_failure.step_back_to, else the
// nearest earlier one of the flow); a bare step_back, with neither, goes
// to the nearest earlier stage where an agent works (checkBareStepBacks). Each hook is reported once, for the
// first node found. A config with errors is not judged: what it says may
// be what failed.
func (v *validator) checkWaysOut() {
	v.checkBareStepBacks()
	if v.d.Errors() > 0 {
		return
	}
	warned := map[*stages.HookEntry]bool{}
	for _, f := range v.cfg.Flows {
		target := "" // the step back of the nodes so far: the nearest one declared
		for _, n := range f.Nodes {
			if of := n.OnFailure(); of != nil && of.StepBackTo != "" {
				target = of.StepBackTo
			}
			if !n.Controller() {
				continue
			}
			for _, h := range n.Hooks() {
				if warned[h] || !v.canFail(h) {
					continue
				}
				if msg, hint, ok := leadsNowhere(h, target); ok {
					warned[h] = true
					v.d.Warnf(h.Pos, hint, "failures of `%s` in %s%s %s", h.Label(), n.Path, v.inFlow(f), msg)
				}
			}
		}
	}
}

// canFail reports whether a failure of h stops the issue: not for an
// optional hook, one that never runs, one that only asks for a PR to be
// watched, or one that sends the issue somewhere itself when it fails
// (section_check's on_fail).
func (v *validator) canFail(h *stages.HookEntry) bool {
	spec, known := v.cat.Hook(h.Name)
	if h.Optional || h.Unsupported || !known || spec.Watches {
		return false
	}
	for _, p := range spec.Params {
		if _, set := h.Params[p.Name]; set && p.Type == stages.ParamStageRef {
			return false
		}
	}
	return true
}

// leadsNowhere says, after "failures of HOOK in NODE", which of h's
// failures have nowhere to go, what to add, and what happens meanwhile,
// its node stepping back to target ("" for nowhere).
func leadsNowhere(h *stages.HookEntry, target string) (msg, hint string, ok bool) {
	const add = "add `on_failure: {step_back_to: STAGE}` to the stage or an `on_failure` to the hook"
	const stops = "the issue stops there until a person moves it"
	p := h.OnFailure
	switch {
	case p == nil && target == "":
		if one, many := routedOnly(h); one != "" {
			// Its on_conflict (or on_ci_failure) is a way out of those
			// failures only: the others still stop for a person (an
			// outage is tried again, and no policy sends it to the agent).
			return fmt.Sprintf("other than %s (a git error, say; a forge that cannot be reached is tried again) go to a person: "+
				"%s routes only %s; to route the others, %s (`on_failure: escalate` to say a person takes them)",
				one, policyKeys(h), many, add), "", true
		}
		return "lead nowhere: " + add, "they escalate to a person", true
	case p == nil:
		return "", "", false
	case p.Action == stages.ActionFail:
		return "lead nowhere: its on_failure is `fail`; use `{step_back_to: STAGE}` or `escalate`", stops, true
	case p.Action == "":
		return "lead nowhere: its on_failure list ends with no action, so the failure stands; end it with `- step_back_to: STAGE` or `- escalate`", stops, true
	}
	return "", "", false
}

// routedOnly names the failures h's own policies other than on_failure
// route, as one and as many ("" when it has none).
func routedOnly(h *stages.HookEntry) (one, many string) {
	switch {
	case h.OnConflict != nil && h.OnCIFailure != nil:
		return "a conflict or a CI failure", "conflicts and CI failures"
	case h.OnConflict != nil:
		return "a conflict", "conflicts"
	case h.OnCIFailure != nil:
		return "a CI failure", "CI failures"
	}
	return "", ""
}

// policyKeys are the keys of h's policies other than on_failure, quoted.
func policyKeys(h *stages.HookEntry) string {
	var keys []string
	for _, p := range h.Policies() {
		if p.Key != "on_failure" {
			keys = append(keys, "`"+p.Key+"`")
		}
	}
	return strings.Join(keys, " and ")
}

// checkBareStepBacks refuses a bare `step_back` (a policy that names no
// stage) that has nowhere to go: with no on_failure.step_back_to at its
// node or before it, it goes to the nearest earlier stage where an agent
// works (stages.Flow.BareStepBack), and a node with no such stage before
// it in some flow leaves it none. Each policy is reported once; each flow
// is read in one pass.
func (v *validator) checkBareStepBacks() {
	refused := map[*stages.FailurePolicy]bool{}
	for _, f := range v.cfg.Flows {
		if v.broken[f.Name] {
			continue
		}
		declared, agent := false, false
		for _, n := range f.Nodes {
			if of := n.OnFailure(); of != nil && of.StepBackTo != "" {
				declared = true
			}
			if !declared && !agent {
				v.refuseBareStepBacks(f, n, refused)
			}
			agent = agent || n.AgentWorks()
		}
	}
}

// refuseBareStepBacks reports each bare step_back of n's hooks, which have
// nowhere to go there.
func (v *validator) refuseBareStepBacks(f *stages.Flow, n *stages.Node, refused map[*stages.FailurePolicy]bool) {
	for _, h := range n.EveryHook() {
		for _, p := range h.Policies() {
			if !p.Policy.IsBareStepBack() || refused[p.Policy] || h.Unsupported {
				continue
			}
			refused[p.Policy] = true
			v.d.Errorf(p.Policy.Pos, fmt.Sprintf("name the stage it goes back to: `%s: {step_back_to: STAGE}`, or add `on_failure: {step_back_to: STAGE}` to the stage", p.Key),
				"the `%s: step_back` of `%s` in %s%s has no stage to step back to: no on_failure.step_back_to is declared there or before it, and no stage before it is one where an agent works",
				p.Key, h.Label(), n.Path, v.inFlow(f))
		}
	}
}

// inFlow names f in a message when it is not the default flow.
func (v *validator) inFlow(f *stages.Flow) string {
	if f.Name == v.cfg.DefaultFlow {
		return ""
	}
	return fmt.Sprintf(" (flow `%s`)", f.Name)
}
