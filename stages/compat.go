package stages

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// mapForm is the spelling of the earlier Python agenttree: stages and
// substages are mappings of name to definition (empty for none), a flow may
// define its stages inline, and some keys are spelled that tool's way.
// Shaping it gives the entries the list form gives, positions kept.
type mapForm struct {
	d *diags
	// defined holds the first definition of each stage, by name.
	defined map[string]*entry
	// fromFlows says the flows define the stages: the file has no
	// top-level `stages:`. inline collects those definitions.
	fromFlows bool
	inline    []*entry
}

// compatKeys maps a key of the earlier tool, when true, to the canonical
// key and value (with its YAML tag) it means; when false it means nothing.
var compatKeys = map[string]struct{ key, tag, value string }{
	"is_parking_lot": {"parking_lot", "!!bool", "true"},
	"is_completion":  {"terminal", "!!str", string(TerminalCompletion)},
	"is_abandon":     {"terminal", "!!str", string(TerminalAbandon)},
}

// shapeCompatible shapes a file of the map form. Its stages are the
// top-level `stages:` mapping or, without one, the inline definitions of
// its flows, the first definition of a name winning.
func shapeCompatible(d *diags, o outline) *source {
	// Files written for the earlier tool carry its keys and hooks.
	d.lax = true
	f := &mapForm{d: d, defined: map[string]*entry{}, fromFlows: o.stages == nil}
	src := &source{outline: o, form: Compatible}
	for _, p := range pairs(o.stages) {
		if e := f.stage(p.key, p.val); e != nil {
			src.stages = append(src.stages, e)
			f.define(e)
		}
	}
	src.flows = flowSources(d, o.flows, f.inlineFlow)
	src.stages = append(src.stages, f.inline...)
	src.implicitDefault = len(src.flows) == 0
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
	for _, p := range pairs(list) {
		refs = append(refs, p.key)
		first := f.defined[p.key.Value]
		switch {
		case first == nil && f.fromFlows:
			if e := f.stage(p.key, p.val); e != nil {
				f.define(e)
				f.inline = append(f.inline, e)
			}
		case first == nil:
			// Left to the flow's reference check, which names it.
		case !isNull(p.val):
			f.d.warnf(f.d.pos(p.key), fmt.Sprintf("the definition at %s is used", f.d.pos(first.at)),
				"stage %q is defined again in flow %q; this definition is ignored", p.key.Value, flow)
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
	for _, p := range pairs(n) {
		if e := f.entry(p.key, p.val, "substage"); e != nil {
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
	if isNull(val) {
		return e
	}
	if val.Kind != yaml.MappingNode {
		f.d.errorf(f.d.pos(val), "", "%s %q must be a mapping or empty, got %s", what, name, kindName(val))
		return nil
	}
	e.keys = f.keys(pairs(val))
	return e
}

// keys spells the earlier tool's keys the canonical way, where their
// values are read as any other: `is_completion: true` is
// `terminal: completion` at the same place.
func (f *mapForm) keys(ps []pair) []pair {
	out := make([]pair, 0, len(ps))
	for _, p := range ps {
		canon, ok := compatKeys[p.key.Value]
		if !ok {
			out = append(out, p)
			continue
		}
		var set bool
		if f.d.boolean(p.val, &set) && set {
			out = append(out, pair{scalarAt(p.key, "!!str", canon.key), scalarAt(p.val, canon.tag, canon.value)})
		}
	}
	return out
}
