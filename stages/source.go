package stages

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// source is a config file shaped alike whichever its spelling: after
// shaping, no pass asks which form the file was in. Values are still the
// file's YAML nodes, so every diagnostic keeps its position.
type source struct {
	outline
	form   Form
	stages []*entry
	flows  []*flowSource
	// implicitDefault adds a flow named default, of every stage in order,
	// when the file declares none. The list form always does; the map form
	// only when it has no flows, since there the flows are the pipeline.
	implicitDefault bool
}

// entry is one stage or substage as written.
type entry struct {
	name string
	// at is where it is written: the list item, or its key in the map form.
	at *yaml.Node
	// keys are its settings in file order, in the canonical spelling,
	// without `name` and, for a stage, without `substages`.
	keys []pair
	// nameKey says the file names it with a `name:` key, which is then one
	// of the keys it may have.
	nameKey bool
	subs    []*entry
}

// outline is the top level of a config file: the keys that give its shape,
// and the others.
type outline struct {
	root        *yaml.Node
	stages      *yaml.Node
	flows       *yaml.Node
	defaultFlow *yaml.Node
	settings    []pair
}

// shape reads the file's stages and flows into a source, through the pass
// of the form it is written in.
func shape(d *diags, root *yaml.Node) *source {
	o := outline{root: root}
	for _, p := range pairs(root) {
		switch p.key.Value {
		case "stages":
			o.stages = p.val
		case "flows":
			o.flows = p.val
		case "default_flow":
			o.defaultFlow = p.val
		default:
			o.settings = append(o.settings, p)
		}
	}
	if o.form() == Compatible {
		return shapeCompatible(d, o)
	}
	return shapeCanonical(d, o)
}

// form tells the spellings apart: the map form writes `stages:` as a
// mapping, or defines its stages inline in a flow.
func (o outline) form() Form {
	if o.stages != nil {
		if o.stages.Kind == yaml.MappingNode {
			return Compatible
		}
		return Canonical
	}
	for _, p := range pairs(o.flows) {
		for _, q := range pairs(p.val) {
			if q.key.Value == "stages" && q.val.Kind == yaml.MappingNode {
				return Compatible
			}
		}
	}
	return Canonical
}

// spelling is what the two forms write differently inside a stage.
type spelling interface {
	// keys turns an entry's keys into the canonical spelling.
	keys(ps []pair) []pair
	// substageMap shapes substages written as a mapping.
	substageMap(stage string, n *yaml.Node) []*entry
}

// listForm is the canonical spelling: stages and substages are lists of
// `- name:` items, and flows list stages by name.
type listForm struct{ d *diags }

func shapeCanonical(d *diags, o outline) *source {
	f := listForm{d}
	src := &source{outline: o, form: Canonical, implicitDefault: true}
	if o.stages != nil {
		if o.stages.Kind == yaml.SequenceNode {
			src.stages = listEntries(d, f, o.stages.Content, "")
		} else {
			d.errorf(d.pos(o.stages), "write `stages:` as a list of `- name: ...` items", "`stages` must be a list, got %s", kindName(o.stages))
		}
	}
	src.flows = flowSources(d, o.flows, f.inlineFlow)
	return src
}

func (listForm) keys(ps []pair) []pair { return ps }

func (f listForm) substageMap(stage string, n *yaml.Node) []*entry {
	f.d.errorf(f.d.pos(n), "in the list form write substages as `- name: SUBSTAGE` items", "substages of %q must be a list", stage)
	return nil
}

func (f listForm) inlineFlow(flow string, list *yaml.Node) ([]*yaml.Node, bool) {
	f.d.errorf(f.d.pos(list), "in the list form a flow is a list of stage names: `"+flow+": [backlog, implement, accepted]`", "flow %q defines stages inline", flow)
	return nil, false
}

// listEntries shapes `- name: ...` items: the stages, or the substages of
// stage when it is not "". Either form may write substages this way.
func listEntries(d *diags, sp spelling, items []*yaml.Node, stage string) []*entry {
	what, upper := "stage", "STAGE"
	if stage != "" {
		what, upper = "substage", "SUBSTAGE"
	}
	var out []*entry
	for _, item := range items {
		if item.Kind == yaml.ScalarNode && !isNull(item) {
			if name, ok := checkName(d, item, what); ok {
				out = append(out, &entry{name: name, at: item})
			}
			continue
		}
		if item.Kind != yaml.MappingNode {
			d.errorf(d.pos(item), "write `- name: "+upper+"`", "a %s must be a mapping, got %s", what, kindName(item))
			continue
		}
		if e := listEntry(d, sp, item, stage, what); e != nil {
			out = append(out, e)
		}
	}
	return out
}

func listEntry(d *diags, sp spelling, item *yaml.Node, stage, what string) *entry {
	var nameNode *yaml.Node
	var keys []pair
	for _, p := range pairs(item) {
		if p.key.Value == "name" {
			nameNode = p.val
			continue
		}
		keys = append(keys, p)
	}
	if nameNode == nil {
		if stage == "" {
			d.errorf(d.pos(item), "add `name: STAGE`", "a stage has no name")
		} else {
			d.errorf(d.pos(item), "add `name: SUBSTAGE`", "a substage of %q has no name", stage)
		}
		return nil
	}
	name, ok := checkName(d, nameNode, what)
	if !ok {
		return nil
	}
	e := &entry{name: name, at: item, nameKey: true, keys: sp.keys(keys)}
	if stage == "" {
		e.takeSubstages(d, sp)
	}
	return e
}

// takeSubstages moves a stage's `substages:` out of its keys, shaped.
// (A substage keeps the key, to be reported: substages do not nest.)
func (e *entry) takeSubstages(d *diags, sp spelling) {
	keys := e.keys[:0:0]
	for _, p := range e.keys {
		if p.key.Value == "substages" {
			e.subs = append(e.subs, substageEntries(d, sp, e.name, p.val)...)
			continue
		}
		keys = append(keys, p)
	}
	e.keys = keys
}

// substageEntries shapes the value of a stage's `substages:`.
func substageEntries(d *diags, sp spelling, stage string, n *yaml.Node) []*entry {
	switch {
	case n.Kind == yaml.SequenceNode:
		return listEntries(d, sp, n.Content, stage)
	case n.Kind == yaml.MappingNode:
		return sp.substageMap(stage, n)
	case !isNull(n):
		d.errorf(d.pos(n), "", "substages of %q must be a list, got %s", stage, kindName(n))
	}
	return nil
}

// checkName reads the name of a stage, substage or flow: a node path joins
// names with dots, so a name cannot hold one.
func checkName(d *diags, n *yaml.Node, what string) (string, bool) {
	name, err := scalarString(n)
	if err != nil {
		d.errorf(d.pos(n), "", "%s name: %s", what, err)
		return "", false
	}
	if name == "" || strings.ContainsAny(name, ". \t") {
		d.errorf(d.pos(n), "use letters, digits, `_` and `-`", "bad %s name %q", what, name)
		return "", false
	}
	return name, true
}
