package load

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/check"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
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
func flowSources(d *diag.Collector, n *yaml.Node, inline inlineFlow) []*flowSource {
	if yamlnode.IsNull(n) || !d.IsMap(n, "flows") {
		return nil
	}
	var out []*flowSource
	seen := map[string]bool{}
	for _, p := range yamlnode.Pairs(n) {
		name, ok := checkName(d, p.Key, "flow")
		if !ok {
			continue
		}
		if seen[name] {
			d.Errorf(d.Pos(p.Key), "rename one", "duplicate flow %q", name)
		}
		if src := flowSourceOf(d, name, p, inline); src != nil {
			seen[name] = true
			out = append(out, src)
		}
	}
	return out
}

func flowSourceOf(d *diag.Collector, name string, p yamlnode.Pair, inline inlineFlow) *flowSource {
	src := &flowSource{name: name, at: p.Key}
	list := p.Val
	if p.Val.Kind == yaml.MappingNode {
		list = nil
		for _, q := range yamlnode.Pairs(p.Val) {
			if q.Key.Value == "stages" {
				list = q.Val
				continue
			}
			d.UnknownKey(q.Key, "flow "+name, []string{"stages"}, "")
		}
		if list == nil {
			d.Errorf(d.Pos(p.Key), "add `stages:`", "flow %q lists no stages", name)
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
		d.Errorf(d.Pos(list), "", "flow %q must be a list of stage names, got %s", name, yamlnode.Describe(list))
		return nil
	}
	return src
}

// resolveFlows turns each flow's references into its nodes. broken names
// the flows with a reference that resolves to nothing, already reported.
func resolveFlows(d *diag.Collector, cfg *stages.Config, srcs []*flowSource) (flows []*stages.Flow, broken map[string]bool) {
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

func resolveFlow(d *diag.Collector, cfg *stages.Config, src *flowSource) (f *stages.Flow, ok bool) {
	f, ok = &stages.Flow{Name: src.name, Pos: d.Pos(src.at)}, true
	for _, item := range src.refs {
		ref, err := yamlnode.String(item)
		if err != nil {
			d.Errorf(d.Pos(item), "", "flow %q: %s", src.name, err)
			continue
		}
		nodes := expand(cfg, ref)
		if nodes == nil {
			ok = false
			d.Errorf(d.Pos(item), diag.Suggest(ref, check.RefNames(cfg)), "flow %q references unknown stage %q", src.name, ref)
			continue
		}
		for _, n := range nodes {
			if !f.Add(n) {
				d.Errorf(d.Pos(item), "list each stage once", "flow %q lists %q twice", src.name, n.Path)
			}
		}
	}
	return f, ok
}

// Unending is a warning for each flow of cfg when no stage of it has
// `terminal:` (check.Unending).
func Unending(cfg *stages.Config) []stages.Diagnostic { return check.Unending(cfg) }

// withDefault adds the implicit default flow when the source asks for one,
// and picks the flow new issues use.
func withDefault(d *diag.Collector, cfg *stages.Config, src *source) {
	if src.implicitDefault && !hasFlow(cfg, "default") {
		f := &stages.Flow{Name: "default", Pos: d.Pos(src.root)}
		for _, s := range cfg.Stages {
			for _, n := range s.Nodes() {
				f.Add(n)
			}
		}
		cfg.Flows = append([]*stages.Flow{f}, cfg.Flows...)
	}
	switch {
	case src.defaultFlow != nil:
		d.StringVar(src.defaultFlow, &cfg.DefaultFlow)
		if !hasFlow(cfg, cfg.DefaultFlow) {
			d.Errorf(d.Pos(src.defaultFlow), diag.Suggest(cfg.DefaultFlow, cfg.FlowNames()), "default_flow names unknown flow %q", cfg.DefaultFlow)
		}
	case hasFlow(cfg, "default"):
		cfg.DefaultFlow = "default"
	default:
		cfg.DefaultFlow = cfg.Flows[0].Name
	}
}

func hasFlow(cfg *stages.Config, name string) bool {
	return slices.ContainsFunc(cfg.Flows, func(f *stages.Flow) bool { return f.Name == name })
}

// expand resolves a flow's reference: `stage.sub` is one node, a bare
// stage name all its nodes in definition order. It returns nil for a
// reference to nothing.
func expand(cfg *stages.Config, ref string) []*stages.Node {
	stage, sub, hasSub := strings.Cut(ref, ".")
	s := cfg.Stage(stage)
	switch {
	case s == nil:
		return nil
	case !hasSub:
		return s.Nodes()
	}
	if ss := s.Substage(sub); ss != nil {
		return []*stages.Node{{Path: ref, Stage: s, Sub: ss}}
	}
	return nil
}
