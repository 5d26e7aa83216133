package load

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// mapForm is the spelling of the earlier Python agenttree: stages and
// substages are mappings of name to definition (empty for none), a flow may
// define its stages inline, and some keys are spelled that tool's way.
// Shaping it gives the entries the list form gives, positions kept.
type mapForm struct {
	d *diag.Collector
	// defined holds the first definition of each stage, by name.
	defined map[string]*entry
	// fromFlows says the flows define the stages: the file has no
	// top-level `stages:`. inline collects those definitions.
	fromFlows bool
	inline    []*entry
	// inert are the keys dropped as changing nothing here, summed up in
	// one warning (inert.go).
	inert []inertKey
}

// compatKeys maps a key of the earlier tool, when true, to the canonical
// key and value (with its YAML tag) it means; when false it means nothing.
var compatKeys = map[string]struct{ key, tag, value string }{
	"is_parking_lot": {"parking_lot", "!!bool", "true"},
	"is_completion":  {"terminal", "!!str", string(stages.TerminalCompletion)},
	"is_abandon":     {"terminal", "!!str", string(stages.TerminalAbandon)},
}

// shapeCompatible shapes a file of the map form. Its stages are the
// top-level `stages:` mapping or, without one, the inline definitions of
// its flows, the first definition of a name winning.
func shapeCompatible(d *diag.Collector, o outline) *source {
	// Files written for the earlier tool carry its keys and hooks.
	d.Lax = true
	f := &mapForm{d: d, defined: map[string]*entry{}, fromFlows: o.stages == nil}
	o.settings = f.settings(o.settings)
	src := &source{outline: o, form: stages.Compatible}
	for _, p := range yamlnode.Pairs(o.stages) {
		if e := f.stage(p.Key, p.Val); e != nil {
			src.stages = append(src.stages, e)
			f.define(e)
		}
	}
	src.flows = flowSources(d, o.flows, f.inlineFlow)
	src.stages = append(src.stages, f.inline...)
	src.implicitDefault = len(src.flows) == 0
	f.inertSummary()
	return src
}

func (f *mapForm) define(e *entry) {
	if _, ok := f.defined[e.name]; !ok {
		f.defined[e.name] = e
	}
}

// inlineFlow reads a flow's mapping of stages: its keys are the flow's
// stage references, and its values define those stages when the flows
// define the stages and the stage is not defined yet. A second definition
// is ignored.
func (f *mapForm) inlineFlow(flow string, list *yaml.Node) (refs []*yaml.Node, ok bool) {
	for _, p := range yamlnode.Pairs(list) {
		refs = append(refs, p.Key)
		first := f.defined[p.Key.Value]
		switch {
		case first == nil && f.fromFlows:
			if e := f.stage(p.Key, p.Val); e != nil {
				f.define(e)
				f.inline = append(f.inline, e)
			}
		case first == nil:
			// Left to the flow's reference check, which names it.
		case !yamlnode.IsNull(p.Val):
			f.d.Warnf(f.d.Pos(p.Key), fmt.Sprintf("the definition at %s is used", f.d.Pos(first.at)),
				"stage %q is defined again in flow %q; this definition is ignored", p.Key.Value, flow)
		}
	}
	return refs, true
}

// stage shapes `name: {definition}`; an empty definition is a plain stage.
func (f *mapForm) stage(key, val *yaml.Node) *entry {
	e := f.entry(key, val, "stage")
	if e != nil {
		e.takeSubstages(f.d, f)
	}
	return e
}

func (f *mapForm) substageMap(_ string, n *yaml.Node) []*entry {
	var out []*entry
	for _, p := range yamlnode.Pairs(n) {
		if e := f.entry(p.Key, p.Val, "substage"); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// entry shapes a stage or substage of the map form, its keys in the
// canonical spelling (`substages` still among them).
func (f *mapForm) entry(key, val *yaml.Node, what string) *entry {
	name, ok := checkName(f.d, key, what)
	if !ok {
		return nil
	}
	e := &entry{name: name, at: key}
	if yamlnode.IsNull(val) {
		return e
	}
	if val.Kind != yaml.MappingNode {
		f.d.Errorf(f.d.Pos(val), "", "%s %q must be a mapping or empty, got %s", what, name, yamlnode.Describe(val))
		return nil
	}
	e.keys = f.keys(yamlnode.Pairs(val))
	return e
}

// keys spells the earlier tool's keys the canonical way, where their
// values are read as any other: `is_completion: true` is
// `terminal: completion` at the same place.
func (f *mapForm) keys(ps []yamlnode.Pair) []yamlnode.Pair {
	ps = f.dropInert(ps, inertStage)
	out := make([]yamlnode.Pair, 0, len(ps))
	for _, p := range ps {
		canon, ok := compatKeys[p.Key.Value]
		if !ok {
			out = append(out, p)
			continue
		}
		var set bool
		if f.d.BoolVar(p.Val, &set) && set {
			out = append(out, yamlnode.Pair{Key: yamlnode.ScalarAt(p.Key, "!!str", canon.key), Val: yamlnode.ScalarAt(p.Val, canon.tag, canon.value)})
		}
	}
	return out
}

// settings spells the earlier tool's top-level keys the canonical way,
// dropping those that change nothing here. Its controller ticked at `on:
// {heartbeat: {interval_s: N}}`, which is `controller: {interval_s: N}`
// at the same place; what it ran at start, stop and each tick has no
// counterpart, and is ignored with a warning.
func (f *mapForm) settings(ps []yamlnode.Pair) []yamlnode.Pair {
	ps = f.dropInert(ps, inertTop)
	out := make([]yamlnode.Pair, 0, len(ps))
	for _, p := range ps {
		switch p.Key.Value {
		case "roles":
			p.Val = f.inertEntries(p.Val, inertRole, f.personRole)
		case "tools":
			p.Val = f.inertEntries(p.Val, inertTool, nil)
		case "merge_strategy":
			f.mergeStrategy(p)
			continue
		case "manager_hooks", "hooks":
			f.hooksNotRun(p)
			continue
		}
		if p.Key.Value != "on" {
			out = append(out, p)
			continue
		}
		tick := f.heartbeat(p.Val)
		if tick == nil {
			continue
		}
		if set := controllerTick(ps); set != nil {
			f.d.Warnf(f.d.Pos(tick.Key), fmt.Sprintf("controller.interval_s at %s sets the tick", f.d.Pos(set)),
				"on.heartbeat.interval_s is ignored")
			continue
		}
		tickMap := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: p.Val.Line, Column: p.Val.Column,
			Content: []*yaml.Node{yamlnode.ScalarAt(tick.Key, "!!str", "interval_s"), tick.Val}}
		out = append(out, yamlnode.Pair{Key: yamlnode.ScalarAt(p.Key, "!!str", "controller"), Val: tickMap})
	}
	return out
}

// heartbeat finds the tick in the earlier tool's `on:`, warning of the
// rest.
func (f *mapForm) heartbeat(on *yaml.Node) *yamlnode.Pair {
	if !f.d.IsMap(on, "on") {
		return nil
	}
	var tick *yamlnode.Pair
	for _, p := range yamlnode.Pairs(on) {
		if p.Key.Value != "heartbeat" {
			f.d.UnknownKey(p.Key, "on", nil, "agenttree runs no hooks when its controller starts or stops")
			continue
		}
		if !f.d.IsMap(p.Val, "on.heartbeat") {
			continue
		}
		for _, q := range yamlnode.Pairs(p.Val) {
			if q.Key.Value == "interval_s" {
				tick = &q
				continue
			}
			f.d.UnknownKey(q.Key, "on.heartbeat", nil, "the controller's work each tick is its own")
		}
	}
	return tick
}

// controllerTick is where ps set controller.interval_s, nil if they do not.
func controllerTick(ps []yamlnode.Pair) *yaml.Node {
	for _, p := range ps {
		if p.Key.Value != "controller" {
			continue
		}
		for _, q := range yamlnode.Pairs(p.Val) {
			if q.Key.Value == "interval_s" {
				return q.Key
			}
		}
	}
	return nil
}

// mergeStrategy reads the earlier tool's merge_strategy, which merge_pr's
// `method` says here: squash, the default of both, changes nothing; another
// is warned of, since merge_pr would squash.
func (f *mapForm) mergeStrategy(p yamlnode.Pair) {
	var method string
	if !f.d.StringVar(p.Val, &method) {
		return
	}
	if method == "squash" {
		f.inert = append(f.inert, inertKey{at: p.Key, group: "`merge_strategy: squash`"})
		return
	}
	f.d.Warnf(f.d.Pos(p.Val), fmt.Sprintf("write it on the hook that merges: `merge_pr: {method: %s}`", method),
		"merge_strategy %q is not read: merge_pr squashes unless its `method` says otherwise", method)
}

// hooksNotRun warns of the earlier tool's hooks outside its stages
// (`manager_hooks:` its controller ran, `hooks:` it ran after a PR was
// made or merged), naming them: agenttree runs none of them. Empty lists
// change nothing.
func (f *mapForm) hooksNotRun(p yamlnode.Pair) {
	var events []string
	for _, ev := range yamlnode.Pairs(p.Val) {
		if ev.Val.Kind != yaml.SequenceNode || len(ev.Val.Content) == 0 {
			continue
		}
		names := make([]string, 0, len(ev.Val.Content))
		for _, item := range ev.Val.Content {
			name := item.Value
			if item.Kind == yaml.MappingNode && len(item.Content) > 0 {
				name = item.Content[0].Value
			}
			names = append(names, "`"+name+"`")
		}
		events = append(events, ev.Key.Value+": "+strings.Join(names, ", "))
	}
	if len(events) == 0 {
		f.inert = append(f.inert, inertKey{at: p.Key, group: "`" + p.Key.Value + "`"})
		return
	}
	f.d.Warnf(f.d.Pos(p.Key), "what must still run goes in the `post_start` of the stage an issue reaches then, e.g. `- run: {command: ...}`",
		"%s is not read: agenttree runs none of the earlier tool's hooks outside its stages (%s)", p.Key.Value, strings.Join(events, "; "))
}
