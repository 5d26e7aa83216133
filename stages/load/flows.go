package load

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
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
			d.Errorf(d.Pos(item), diag.Suggest(ref, refNames(cfg)), "flow %q references unknown stage %q", src.name, ref)
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
// `terminal:`: an issue is then never done, and stays at its flow's last
// stage with nothing to move it on. A config that declares an end has
// each flow checked as it loads (checkFlowEnds); one that declares none
// loads, as the earlier tool's did, and `agenttree validate` says this.
func Unending(cfg *stages.Config) []stages.Diagnostic {
	for _, s := range cfg.Stages {
		if slices.ContainsFunc(s.Nodes(), isTerminal) {
			return nil
		}
	}
	var out []stages.Diagnostic
	for _, f := range cfg.Flows {
		if !slices.ContainsFunc(f.Nodes, isWork) {
			continue // reported as a flow of parking lots
		}
		last := lastReached(f)
		out = append(out, stages.Diagnostic{Pos: f.Pos, Severity: stages.SevWarning,
			Msg:  fmt.Sprintf("flow %q has no terminal stage, nor has any stage of the pipeline: an issue on it is never done, and stays at %s for good", f.Name, last.Path),
			Hint: endHint(cfg.Form, last)})
	}
	return out
}

// lastReached is the last node of f that `next` moves an issue to: a
// redirect_only one after it is reached only by a redirect.
func lastReached(f *stages.Flow) *stages.Node {
	for i := len(f.Nodes) - 1; i > 0; i-- {
		if !f.Nodes[i].RedirectOnly() {
			return f.Nodes[i]
		}
	}
	return f.Nodes[0]
}

// endHint is the fix for a flow that ends at last, spelt the way the
// file is: the map form's key for the end is the earlier tool's
// `is_completion`, and its last parking lot (`accepted`) is where that
// tool's issues ended.
func endHint(form stages.Form, last *stages.Node) string {
	switch {
	case form != stages.Compatible:
		return "add the stage issues end in, last in `stages:` (and in each flow of `flows:`): `- name: accepted` with `terminal: completion`"
	case last.ParkingLot() && last.Sub == nil:
		return fmt.Sprintf("if issues are done there, give %s `is_completion: true`", last.Path)
	}
	return "add the stage issues end in, last in the flow's stages (and in each other flow's list): `accepted: {is_completion: true}`"
}

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

// refNames lists every name a reference may use, for suggestions.
func refNames(cfg *stages.Config) []string {
	var names []string
	for _, s := range cfg.Stages {
		names = append(names, s.Name)
		for _, ss := range s.Substages {
			names = append(names, ss.Name, s.Name+"."+ss.Name)
		}
	}
	return names
}
