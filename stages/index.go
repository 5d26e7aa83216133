package stages

import (
	"slices"
	"strings"
)

// The lookups below answer from the indexes Load builds, so loading and
// the engine's questions cost the same at 20,000 stages as at 20. A value
// built by hand, without them, is searched instead.

// stage finds a stage by name.
func (c *Config) stage(name string) *Stage {
	if c.byName != nil && len(c.byName) == len(c.Stages) {
		return c.byName[name]
	}
	if i := slices.IndexFunc(c.Stages, func(s *Stage) bool { return s.Name == name }); i >= 0 {
		return c.Stages[i]
	}
	return nil
}

// substage finds one of the stage's substages by name.
func (s *Stage) substage(name string) *Substage {
	if s.byName != nil && len(s.byName) == len(s.Substages) {
		return s.byName[name]
	}
	if i := slices.IndexFunc(s.Substages, func(ss *Substage) bool { return ss.Name == name }); i >= 0 {
		return s.Substages[i]
	}
	return nil
}

// addSubstage adds ss unless the stage has a substage of that name, which
// it returns instead.
func (s *Stage) addSubstage(ss *Substage) (first *Substage) {
	if s.byName == nil {
		s.byName = map[string]*Substage{}
	}
	if first := s.byName[ss.Name]; first != nil {
		return first
	}
	s.byName[ss.Name] = ss
	s.Substages = append(s.Substages, ss)
	return nil
}

func substageNode(s *Stage, ss *Substage) *Node {
	return &Node{Path: s.Name + "." + ss.Name, Stage: s, Sub: ss}
}

// expandStage lists the nodes of a stage: itself, or its substages.
func expandStage(s *Stage) []*Node {
	if len(s.Substages) == 0 {
		return []*Node{{Path: s.Name, Stage: s}}
	}
	out := make([]*Node, len(s.Substages))
	for i, ss := range s.Substages {
		out[i] = substageNode(s, ss)
	}
	return out
}

// expand resolves a flow's reference: `stage.sub` is one node, a bare
// stage name all its nodes in definition order. It returns nil for a
// reference to nothing.
func (c *Config) expand(ref string) []*Node {
	stage, sub, hasSub := strings.Cut(ref, ".")
	s := c.stage(stage)
	if s == nil {
		return nil
	}
	if !hasSub {
		return expandStage(s)
	}
	if ss := s.substage(sub); ss != nil {
		return []*Node{substageNode(s, ss)}
	}
	return nil
}

// refNames lists every name a reference may use, for suggestions.
func (c *Config) refNames() []string {
	var names []string
	for _, s := range c.Stages {
		names = append(names, s.Name)
		for _, ss := range s.Substages {
			names = append(names, ss.Name, s.Name+"."+ss.Name)
		}
	}
	return names
}

func (c *Config) hasFlow(name string) bool {
	return slices.ContainsFunc(c.Flows, func(f *Flow) bool { return f.Name == name })
}

func newFlow(name string, pos Pos) *Flow {
	return &Flow{Name: name, Pos: pos, index: map[string]int{}}
}

// add appends n unless the flow holds its path already.
func (f *Flow) add(n *Node) bool {
	if _, dup := f.index[n.Path]; dup {
		return false
	}
	f.index[n.Path] = len(f.Nodes)
	f.Nodes = append(f.Nodes, n)
	return true
}
