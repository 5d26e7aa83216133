package load

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
)

// ledger collects, while stages are read, what can only be checked once
// every stage is known: the stage references hooks and on_failure make,
// the message templates, and the variables hooks provide to them.
type ledger struct {
	refs      []*stageRef
	templates []templateUse
	outputs   map[string]bool
}

// stageRef is a stage reference in a hook or on_failure.
type stageRef struct {
	pos  stages.Pos
	from owner
	ref  string
	// set writes the resolved node path back where the reference was read.
	set func(path string)
	// what names the reference in errors: `section_check.on_fail`.
	what string
	// verb says what sends the issue there: "on_fail" in "whose on_fail
	// sends issues to".
	verb string
	// target is the resolved node path; empty when ref did not resolve.
	target string
}

type templateUse struct {
	pos  stages.Pos
	text string
	what string
}

// engineVars are the message variables agenttree adds itself, beside
// every issue's own (the catalog's) and the outputs of the config's hooks:
//   - failure_reason: the engine's, in the message of a step back (the
//     failing hook's reason);
//   - attempt, max_retries: the host controller's, in the messages it sends
//     an agent after a failure (the how-many-th try, of the config's
//     max_retries).
var engineVars = []string{"failure_reason", "attempt", "max_retries"}

func newLedger(cat stages.HookCatalog) *ledger {
	l := &ledger{outputs: map[string]bool{}}
	l.provide(cat.Variables()...)
	l.provide(engineVars...)
	return l
}

func (l *ledger) refer(r *stageRef) { l.refs = append(l.refs, r) }

func (l *ledger) template(pos stages.Pos, text, what string) {
	l.templates = append(l.templates, templateUse{pos: pos, text: text, what: what})
}

func (l *ledger) provide(names ...string) {
	for _, n := range names {
		l.outputs[n] = true
	}
}

// validator checks a config whose stages and flows are all read.
type validator struct {
	d   *diag.Collector
	cfg *stages.Config
	led *ledger
	// broken names flows with a bad reference, already reported: their
	// node lists are incomplete.
	broken map[string]bool
}

// validate checks what refers to what, once every stage and flow is read.
func validate(d *diag.Collector, cfg *stages.Config, led *ledger, broken map[string]bool) {
	v := &validator{d: d, cfg: cfg, led: led, broken: broken}
	for _, f := range cfg.Flows {
		v.checkFlow(f)
	}
	v.resolveRefs()
	v.checkFlowTargets()
	v.checkTemplates()
}

func (v *validator) checkFlow(f *stages.Flow) {
	if v.broken[f.Name] {
		return
	}
	if len(f.Nodes) == 0 {
		v.d.Errorf(f.Pos, "list the stages an issue goes through", "flow %q has no stages", f.Name)
		return
	}
	if slices.ContainsFunc(f.Nodes, func(n *stages.Node) bool { return !n.ParkingLot() }) {
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

func (v *validator) resolveRefs() {
	for _, r := range v.led.refs {
		// A bare name is first looked for among the substages of the
		// stage the reference is made in.
		n, ok := v.cfg.ResolveRef(&stages.Node{Stage: r.from.stage}, r.ref)
		if !ok {
			v.d.Errorf(r.pos, diag.Suggest(r.ref, refNames(v.cfg)), "%s names unknown stage %q", r.what, r.ref)
			continue
		}
		r.target = n.Path
		r.set(n.Path)
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
		for _, r := range v.led.refs {
			if r.target == "" || f.Index(r.target) >= 0 {
				continue
			}
			from := first.of(r.from)
			if from == "" {
				continue
			}
			v.d.Tolerate(r.pos, diag.Tolerable{Msg: fmt.Sprintf(
				"flow `%s` includes %s, whose %s sends issues to %s, which flow `%s` does not include; add it to the flow",
				f.Name, from, r.verb, r.target, f.Name)})
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
func (f firsts) of(o owner) string {
	if o.sub != nil {
		return f.subs[o.sub]
	}
	return f.stages[o.stage]
}

func (v *validator) checkTemplates() {
	for _, t := range v.led.templates {
		for _, name := range stages.Placeholders(t.text) {
			if v.led.outputs[name] {
				continue
			}
			known := slices.Sorted(maps.Keys(v.led.outputs))
			hint := diag.Suggest(name, known)
			if hint == "" {
				hint = "known variables: " + strings.Join(known, ", ")
			}
			v.d.Errorf(t.pos, hint, "%s uses {{%s}}, which no hook or issue provides", t.what, name)
		}
	}
}
