// Package check checks a config whose stages and flows are all read, as
// a whole: what refers to what, that every flow ends and every failure
// has a way out, that merges are reviewed, and that the templates and
// conditions name what is known where they run.
package check

import (
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
)

// validator checks a config whose stages and flows are all read.
type validator struct {
	d   *diag.Collector
	cfg *stages.Config
	cat stages.HookCatalog
	led *ledger.Ledger
	// broken names flows with a bad reference, already reported: their
	// node lists are incomplete.
	broken map[string]bool
}

// Pipeline checks what refers to what, once every stage and flow is read.
// broken names the flows with a bad reference, already reported.
func Pipeline(d *diag.Collector, cfg *stages.Config, cat stages.HookCatalog, led *ledger.Ledger, broken map[string]bool) {
	v := &validator{d: d, cfg: cfg, cat: cat, led: led, broken: broken}
	// A pipeline with no terminal stage at all ends where its last stage
	// is: only a config that declares its ends asks each flow to have one.
	ends := slices.ContainsFunc(cfg.Stages, func(s *stages.Stage) bool { return slices.ContainsFunc(s.Nodes(), isTerminal) })
	for _, f := range cfg.Flows {
		v.checkFlow(f)
		if ends {
			v.checkFlowEnds(f)
		}
	}
	v.checkReviews()
	v.checkAgentCreate()
	v.checkRoles()
	v.resolveRefs()
	v.checkFlowTargets()
	v.checkDirections()
	v.checkGateConditions()
	v.led.CheckTemplates(d)
	v.checkWaysOut()
	v.checkMerges()
	v.checkLocalCI()
	v.checkNodesPush()
}

// checkAgentCreate reports a flow agent_create names that does not exist.
func (v *validator) checkAgentCreate() {
	for _, name := range v.cfg.AgentCreate.Flows {
		if !slices.Contains(v.cfg.FlowNames(), name) {
			v.d.Errorf(v.cfg.AgentCreate.Pos, diag.Suggest(name, v.cfg.FlowNames()), "agent_create names unknown flow %q", name)
		}
	}
}

// checkRoles warns of a `roles:` entry no stage has: most likely a typo,
// which would leave the role's stages without sessions. (A stage whose
// role has no entry is fine: it gets no sessions.)
func (v *validator) checkRoles() {
	var used []string
	for _, s := range v.cfg.Stages {
		for _, n := range s.Nodes() {
			if r := string(n.Role()); !slices.Contains(used, r) {
				used = append(used, r)
			}
		}
	}
	for _, r := range v.cfg.Roles {
		if !slices.Contains(used, string(r.Role)) {
			v.d.Warnf(r.Pos, diag.Suggest(string(r.Role), used), "no stage has role %q; its entry in `roles:` is unused", r.Role)
		}
	}
}

func (v *validator) checkFlow(f *stages.Flow) {
	if v.broken[f.Name] {
		return
	}
	if len(f.Nodes) == 0 {
		v.d.Errorf(f.Pos, "list the stages an issue goes through", "flow %q has no stages", f.Name)
		return
	}
	if slices.ContainsFunc(f.Nodes, isWork) {
		return
	}
	// The earlier tool's files keep one such flow where abandoned issues
	// rest (`not_doing`); an issue put there just stays.
	v.d.Tolerate(f.Pos, diag.Tolerable{
		Msg:     fmt.Sprintf("flow %q has only parking-lot stages", f.Name),
		Hint:    "add a stage where work happens",
		LaxHint: "issues on it can only wait; add a stage where work happens if that is not the intent",
	})
}

// checkFlowEnds reports a flow with no terminal stage: an issue on it is
// never done, and one whose PR is merged or closed by hand has no stage
// to settle in. A flow of parking lots is reported as such already. The
// earlier tool let it pass, so its files get a warning.
func (v *validator) checkFlowEnds(f *stages.Flow) {
	if v.broken[f.Name] || !slices.ContainsFunc(f.Nodes, isWork) || slices.ContainsFunc(f.Nodes, isTerminal) {
		return
	}
	v.d.Tolerate(f.Pos, diag.Tolerable{
		Msg:     fmt.Sprintf("flow %q has no terminal stage: an issue on it can never be done", f.Name),
		Hint:    "add the stage it ends in (one with `terminal: completion`) to the flow",
		LaxHint: "an issue on it stays at its last stage; add the stage it ends in (one with `is_completion: true`) if that is not the intent",
	})
}

func isTerminal(n *stages.Node) bool { return n.Terminal() != stages.TerminalNone }

func isWork(n *stages.Node) bool { return !n.ParkingLot() }

// checkReviews refuses a human review that the host controller runs with
// nothing of its own to do there: at a review the controller runs the
// entry hooks (post_start: open the PR, wait for CI) and a person
// approves; one without entry hooks would say the controller moves the
// review on, which it never does.
func (v *validator) checkReviews() {
	for _, s := range v.cfg.Stages {
		for _, n := range s.Nodes() {
			if n.HumanReview() && n.Controller() && len(n.Entering(nil)) == 0 {
				pos := s.Pos
				if n.Sub != nil {
					pos = n.Sub.Pos
				}
				v.d.Errorf(pos, "drop `host: controller` (the stage waits for a person), or give the controller entry work to do there (post_start hooks)",
					"stage %s is a human review run by the host controller: a person approves a human review, the controller never does", n.Path)
			}
		}
	}
}

func (v *validator) resolveRefs() {
	for _, r := range v.led.Refs {
		// A bare name is first looked for among the substages of the
		// stage the reference is made in.
		n, ok := v.cfg.ResolveRef(&stages.Node{Stage: r.From.Stage}, r.Ref)
		if !ok {
			v.d.Errorf(r.Pos, diag.Suggest(r.Ref, RefNames(v.cfg)), "%s names unknown stage %q", r.What, r.Ref)
			continue
		}
		r.Target = n.Path
		r.Set(n.Path)
	}
}

// checkFlowTargets checks that every node a flow's stages can send an issue
// to belongs to that flow: an issue keeps its flow, and on a node its flow
// does not contain `next` cannot tell where to go. The earlier tool did not
// check this, so its files get a warning.
func (v *validator) checkFlowTargets() {
	for _, f := range v.cfg.Flows {
		if v.broken[f.Name] {
			continue
		}
		first := firstNodes(f)
		for _, r := range v.led.Refs {
			if r.Target == "" || f.Index(r.Target) >= 0 {
				continue
			}
			from := first.of(r.From)
			if from == "" {
				continue
			}
			v.d.Tolerate(r.Pos, diag.Tolerable{Msg: fmt.Sprintf(
				"flow `%s` includes %s, whose %s sends issues to %s, which flow `%s` does not include; add it to the flow",
				f.Name, from, r.Verb, r.Target, f.Name)})
		}
	}
}

// firsts holds the path of the first node of each stage and substage a
// flow includes.
type firsts struct {
	stages map[*stages.Stage]string
	subs   map[*stages.Substage]string
}

func firstNodes(f *stages.Flow) firsts {
	out := firsts{stages: map[*stages.Stage]string{}, subs: map[*stages.Substage]string{}}
	for _, n := range f.Nodes {
		if _, ok := out.stages[n.Stage]; !ok {
			out.stages[n.Stage] = n.Path
		}
		if n.Sub != nil {
			out.subs[n.Sub] = n.Path
		}
	}
	return out
}

// of is the first node of the flow where o's keys apply, "" if none.
func (f firsts) of(o ledger.Owner) string {
	if o.Sub != nil {
		return f.subs[o.Sub]
	}
	return f.stages[o.Stage]
}

// RefNames lists every name a reference may use, for suggestions.
func RefNames(cfg *stages.Config) []string {
	var names []string
	for _, s := range cfg.Stages {
		names = append(names, s.Name)
		for _, ss := range s.Substages {
			names = append(names, ss.Name, s.Name+"."+ss.Name)
		}
	}
	return names
}
