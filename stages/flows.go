package stages

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// flows reads `flows:`. In the compatible form a flow's `stages` may be a
// map of inline stage definitions; those are defined first, so any flow may
// reference a stage another flow defines.
func (l *loader) flows(n *yaml.Node, defineFromFlows bool) {
	if isNull(n) {
		return
	}
	if !l.isMap(n, "flows") {
		return
	}
	type flowSrc struct {
		name  string
		pos   Pos
		items []*yaml.Node // scalar references, or map keys of inline stages
	}
	var srcs []flowSrc
	for _, p := range pairs(n) {
		name, ok := l.checkName(p.key, "flow")
		if !ok {
			continue
		}
		for _, f := range srcs {
			if f.name == name {
				l.d.errorf(l.pos(p.key), "rename one", "duplicate flow %q", name)
			}
		}
		src := flowSrc{name: name, pos: l.pos(p.key)}
		list := p.val
		if p.val.Kind == yaml.MappingNode {
			list = nil
			for _, q := range pairs(p.val) {
				if q.key.Value == "stages" {
					list = q.val
					continue
				}
				l.unknownKey(q.key, "flow "+name, []string{"stages"}, "")
			}
			if list == nil {
				l.d.errorf(src.pos, "add `stages:`", "flow %q lists no stages", name)
				continue
			}
		}
		switch {
		case list.Kind == yaml.SequenceNode:
			src.items = list.Content
		case list.Kind == yaml.MappingNode && l.canonical():
			l.d.errorf(l.pos(list), "in the list form a flow is a list of stage names: `"+name+": [backlog, implement, accepted]`", "flow %q defines stages inline", name)
			continue
		case list.Kind == yaml.MappingNode:
			for _, q := range pairs(list) {
				src.items = append(src.items, q.key)
				existing := l.stageNamed(q.key.Value)
				switch {
				case existing == nil && defineFromFlows:
					if s := l.mapStage(q.key, q.val); s != nil {
						l.addStage(s)
					}
				case existing == nil:
					// Left to the reference check below, which names it.
				case !isNull(q.val):
					l.d.warnf(l.pos(q.key), fmt.Sprintf("the definition at %s is used", existing.Pos), "stage %q is defined again in flow %q; this definition is ignored", q.key.Value, name)
				}
			}
		default:
			l.d.errorf(l.pos(list), "", "flow %q must be a list of stage names, got %s", name, kindName(list))
			continue
		}
		srcs = append(srcs, src)
	}
	for _, src := range srcs {
		f := &Flow{Name: src.name, Pos: src.pos}
		for _, item := range src.items {
			ref, err := scalarString(item)
			if err != nil {
				l.d.errorf(l.pos(item), "", "flow %q: %s", src.name, err)
				continue
			}
			nodes := l.flowRef(ref)
			if nodes == nil {
				l.brokenFlows[src.name] = true
				l.d.errorf(l.pos(item), suggest(ref, l.refNames()), "flow %q references unknown stage %q", src.name, ref)
				continue
			}
			for _, nd := range nodes {
				if f.Index(nd.Path) >= 0 {
					l.d.errorf(l.pos(item), "list each stage once", "flow %q lists %q twice", src.name, nd.Path)
					continue
				}
				f.Nodes = append(f.Nodes, nd)
			}
		}
		l.cfg.Flows = append(l.cfg.Flows, f)
	}
}

// flowRef expands a flow item: `stage.sub` is one node, a bare stage name
// is all its substages in definition order.
func (l *loader) flowRef(ref string) []*Node {
	stage, sub, hasSub := strings.Cut(ref, ".")
	s := l.stageNamed(stage)
	if s == nil {
		return nil
	}
	if !hasSub {
		return expandStage(s)
	}
	for _, ss := range s.Substages {
		if ss.Name == sub {
			return []*Node{{Path: ref, Stage: s, Sub: ss}}
		}
	}
	return nil
}

func (l *loader) checkFlow(f *Flow) {
	if l.brokenFlows[f.Name] {
		return // its bad references are reported already
	}
	if len(f.Nodes) == 0 {
		l.d.errorf(f.Pos, "list the stages an issue goes through", "flow %q has no stages", f.Name)
		return
	}
	for _, n := range f.Nodes {
		if !n.ParkingLot() {
			return
		}
	}
	if !l.canonical() {
		// The earlier tool's files keep one such flow where abandoned issues
		// rest (`not_doing`); an issue put there just stays.
		l.d.warnf(f.Pos, "issues on it can only wait; add a stage where work happens if that is not the intent", "flow %q has only parking-lot stages", f.Name)
		return
	}
	l.d.errorf(f.Pos, "add a stage where work happens", "flow %q has only parking-lot stages", f.Name)
}
