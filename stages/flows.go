package stages

import (
	"gopkg.in/yaml.v3"
)

// flowSource is one flow as written: its name and its stage references.
type flowSource struct {
	name string
	at   *yaml.Node
	refs []*yaml.Node
}

// inlineFlow shapes a flow whose stages are written as a mapping, the way
// its form allows (or not); false drops the flow.
type inlineFlow func(flow string, list *yaml.Node) (refs []*yaml.Node, ok bool)

// flowSources reads `flows:`: each flow is a list of stage references, or a
// mapping whose `stages:` is.
func flowSources(d *diags, n *yaml.Node, inline inlineFlow) []*flowSource {
	if isNull(n) || !d.isMap(n, "flows") {
		return nil
	}
	var out []*flowSource
	seen := map[string]bool{}
	for _, p := range pairs(n) {
		name, ok := checkName(d, p.key, "flow")
		if !ok {
			continue
		}
		if seen[name] {
			d.errorf(d.pos(p.key), "rename one", "duplicate flow %q", name)
		}
		if src := flowSourceOf(d, name, p, inline); src != nil {
			seen[name] = true
			out = append(out, src)
		}
	}
	return out
}

func flowSourceOf(d *diags, name string, p pair, inline inlineFlow) *flowSource {
	src := &flowSource{name: name, at: p.key}
	list := p.val
	if p.val.Kind == yaml.MappingNode {
		list = nil
		for _, q := range pairs(p.val) {
			if q.key.Value == "stages" {
				list = q.val
				continue
			}
			d.unknownKey(q.key, "flow "+name, []string{"stages"}, "")
		}
		if list == nil {
			d.errorf(d.pos(p.key), "add `stages:`", "flow %q lists no stages", name)
			return nil
		}
	}
	switch list.Kind {
	case yaml.SequenceNode:
		src.refs = list.Content
	case yaml.MappingNode:
		refs, ok := inline(name, list)
		if !ok {
			return nil
		}
		src.refs = refs
	default:
		d.errorf(d.pos(list), "", "flow %q must be a list of stage names, got %s", name, kindName(list))
		return nil
	}
	return src
}

// resolveFlows turns each flow's references into its nodes. broken names
// the flows with a reference that resolves to nothing, already reported.
func resolveFlows(d *diags, cfg *Config, srcs []*flowSource) (flows []*Flow, broken map[string]bool) {
	broken = map[string]bool{}
	for _, src := range srcs {
		f, ok := resolveFlow(d, cfg, src)
		if !ok {
			broken[src.name] = true
		}
		flows = append(flows, f)
	}
	return flows, broken
}

func resolveFlow(d *diags, cfg *Config, src *flowSource) (f *Flow, ok bool) {
	f, ok = newFlow(src.name, d.pos(src.at)), true
	for _, item := range src.refs {
		ref, err := scalarString(item)
		if err != nil {
			d.errorf(d.pos(item), "", "flow %q: %s", src.name, err)
			continue
		}
		nodes := cfg.expand(ref)
		if nodes == nil {
			ok = false
			d.errorf(d.pos(item), suggest(ref, cfg.refNames()), "flow %q references unknown stage %q", src.name, ref)
			continue
		}
		for _, n := range nodes {
			if !f.add(n) {
				d.errorf(d.pos(item), "list each stage once", "flow %q lists %q twice", src.name, n.Path)
			}
		}
	}
	return f, ok
}

// withDefault adds the implicit default flow when the source asks for one,
// and picks the flow new issues use.
func withDefault(d *diags, cfg *Config, src *source) {
	if src.implicitDefault && !cfg.hasFlow("default") {
		f := newFlow("default", d.pos(src.root))
		for _, s := range cfg.Stages {
			for _, n := range expandStage(s) {
				f.add(n)
			}
		}
		cfg.Flows = append([]*Flow{f}, cfg.Flows...)
	}
	switch {
	case src.defaultFlow != nil:
		d.str(src.defaultFlow, &cfg.DefaultFlow)
		if !cfg.hasFlow(cfg.DefaultFlow) {
			d.errorf(d.pos(src.defaultFlow), suggest(cfg.DefaultFlow, cfg.FlowNames()), "default_flow names unknown flow %q", cfg.DefaultFlow)
		}
	case cfg.hasFlow("default"):
		cfg.DefaultFlow = "default"
	default:
		cfg.DefaultFlow = cfg.Flows[0].Name
	}
}
