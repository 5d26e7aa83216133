package load

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// source is a config file shaped alike whichever its spelling: after
// shaping, no pass asks which form the file was in. Values are still the
// file's YAML nodes, so every diagnostic keeps its position.
type source struct {
	outline
	form   stages.Form
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
	keys []yamlnode.Pair
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
	settings    []yamlnode.Pair
}

// shape reads the file's stages and flows into a source, through the pass
// of the form it is written in.
func shape(d *diag.Collector, root *yaml.Node) *source {
	o := outline{root: root}
	for _, p := range yamlnode.Pairs(root) {
		switch p.Key.Value {
		case "stages":
			o.stages = p.Val
		case "flows":
			o.flows = p.Val
		case "default_flow":
			o.defaultFlow = p.Val
		default:
			o.settings = append(o.settings, p)
		}
	}
	if o.form() == stages.Compatible {
		return shapeCompatible(d, o)
	}
	return shapeCanonical(d, o)
}

// form tells the spellings apart: the map form writes `stages:` as a
// mapping, or defines its stages inline in a flow.
func (o outline) form() stages.Form {
	if o.stages != nil {
		if o.stages.Kind == yaml.MappingNode {
			return stages.Compatible
		}
		return stages.Canonical
	}
	for _, p := range yamlnode.Pairs(o.flows) {
		for _, q := range yamlnode.Pairs(p.Val) {
			if q.Key.Value == "stages" && q.Val.Kind == yaml.MappingNode {
				return stages.Compatible
			}
		}
	}
	return stages.Canonical
}

// spelling is what the two forms write differently inside a stage.
type spelling interface {
	// keys turns an entry's keys into the canonical spelling.
	keys(ps []yamlnode.Pair) []yamlnode.Pair
	// substageMap shapes substages written as a mapping.
	substageMap(stage string, n *yaml.Node) []*entry
}

// listForm is the canonical spelling: stages and substages are lists of
// `- name:` items, and flows list stages by name.
type listForm struct{ d *diag.Collector }

func shapeCanonical(d *diag.Collector, o outline) *source {
	f := listForm{d}
	src := &source{outline: o, form: stages.Canonical, implicitDefault: true}
	if o.stages != nil {
		if o.stages.Kind == yaml.SequenceNode {
			src.stages = listEntries(d, f, o.stages.Content, "")
		} else {
			d.Errorf(d.Pos(o.stages), "write `stages:` as a list of `- name: ...` items", "`stages` must be a list, got %s", yamlnode.Describe(o.stages))
		}
	}
	src.flows = flowSources(d, o.flows, f.inlineFlow)
	return src
}

func (listForm) keys(ps []yamlnode.Pair) []yamlnode.Pair { return ps }

// substageMap shapes substages written as a mapping of name to settings
// (`feedback: {pre_completion: [...]}`), in the order written, as the map
// form writes them; their keys are spelled the list form's way.
func (f listForm) substageMap(_ string, n *yaml.Node) []*entry {
	var out []*entry
	for _, p := range yamlnode.Pairs(n) {
		name, ok := checkName(f.d, p.Key, "substage")
		if !ok {
			continue
		}
		e := &entry{name: name, at: p.Key}
		switch {
		case yamlnode.IsNull(p.Val):
		case p.Val.Kind == yaml.MappingNode:
			e.keys = yamlnode.Pairs(p.Val)
		default:
			f.d.Errorf(f.d.Pos(p.Val), "write its settings as a mapping (`"+name+": {pre_completion: [...]}`), or nothing",
				"substage %q must be a mapping or empty, got %s", name, yamlnode.Describe(p.Val))
			continue
		}
		out = append(out, e)
	}
	return out
}

func (f listForm) inlineFlow(flow string, list *yaml.Node) ([]*yaml.Node, bool) {
	f.d.Errorf(f.d.Pos(list), "in the list form a flow is a list of stage names: `"+flow+": [backlog, implement, accepted]`", "flow %q defines stages inline", flow)
	return nil, false
}

// listEntries shapes `- name: ...` items: the stages, or the substages of
// stage when it is not "". Either form may write substages this way.
func listEntries(d *diag.Collector, sp spelling, items []*yaml.Node, stage string) []*entry {
	what, upper := "stage", "STAGE"
	if stage != "" {
		what, upper = "substage", "SUBSTAGE"
	}
	var out []*entry
	for _, item := range items {
		if item.Kind == yaml.ScalarNode && !yamlnode.IsNull(item) {
			if name, ok := checkName(d, item, what); ok {
				out = append(out, &entry{name: name, at: item})
			}
			continue
		}
		if item.Kind != yaml.MappingNode {
			d.Errorf(d.Pos(item), "write `- name: "+upper+"`", "a %s must be a mapping, got %s", what, yamlnode.Describe(item))
			continue
		}
		if e := listEntry(d, sp, item, stage, what); e != nil {
			out = append(out, e)
		}
	}
	return out
}

func listEntry(d *diag.Collector, sp spelling, item *yaml.Node, stage, what string) *entry {
	var nameNode *yaml.Node
	var keys []yamlnode.Pair
	for _, p := range yamlnode.Pairs(item) {
		if p.Key.Value == "name" {
			nameNode = p.Val
			continue
		}
		keys = append(keys, p)
	}
	if nameNode == nil {
		if stage == "" {
			d.Errorf(d.Pos(item), "add `name: STAGE`", "a stage has no name")
		} else {
			d.Errorf(d.Pos(item), "add `name: SUBSTAGE`", "a substage of %q has no name", stage)
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
func (e *entry) takeSubstages(d *diag.Collector, sp spelling) {
	keys := e.keys[:0:0]
	for _, p := range e.keys {
		if p.Key.Value == "substages" {
			e.subs = append(e.subs, substageEntries(d, sp, e.name, p.Val)...)
			continue
		}
		keys = append(keys, p)
	}
	e.keys = keys
}

// substageEntries shapes the value of a stage's `substages:`.
func substageEntries(d *diag.Collector, sp spelling, stage string, n *yaml.Node) []*entry {
	switch {
	case n.Kind == yaml.SequenceNode:
		return listEntries(d, sp, n.Content, stage)
	case n.Kind == yaml.MappingNode:
		return sp.substageMap(stage, n)
	case !yamlnode.IsNull(n):
		d.Errorf(d.Pos(n), "", "substages of %q must be a list, got %s", stage, yamlnode.Describe(n))
	}
	return nil
}

// checkName reads the name of a stage, substage or flow: a node path joins
// names with dots, so a name cannot hold one.
func checkName(d *diag.Collector, n *yaml.Node, what string) (string, bool) {
	name, err := yamlnode.String(n)
	if err != nil {
		d.Errorf(d.Pos(n), "", "%s name: %s", what, err)
		return "", false
	}
	if name == "" || strings.ContainsAny(name, ". \t") {
		d.Errorf(d.Pos(n), "use letters, digits, `_` and `-`", "bad %s name %q", what, name)
		return "", false
	}
	return name, true
}
