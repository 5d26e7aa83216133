package stages

import "slices"

// A loaded Config answers its lookups from indexes built as it is
// assembled through the Add methods below (the loader's way), so loading
// and the engine's questions cost the same at 20,000 stages as at 20. A
// Config is not to be changed once loaded. A value built by hand, or
// changed by appending to its slices, is searched instead: slower, never
// wrong.

// Stage finds a stage by name; nil if there is none.
func (c *Config) Stage(name string) *Stage {
	if c.byName != nil && len(c.byName) == len(c.Stages) {
		return c.byName[name]
	}
	if i := slices.IndexFunc(c.Stages, func(s *Stage) bool { return s.Name == name }); i >= 0 {
		return c.Stages[i]
	}
	return nil
}

// AddStage appends s unless the config has a stage of that name, which it
// returns instead.
func (c *Config) AddStage(s *Stage) (first *Stage) {
	if first := c.Stage(s.Name); first != nil {
		return first
	}
	if c.byName == nil {
		c.byName = map[string]*Stage{}
	}
	c.byName[s.Name] = s
	c.Stages = append(c.Stages, s)
	return nil
}

// Substage finds one of the stage's substages by name; nil if there is none.
func (s *Stage) Substage(name string) *Substage {
	if s.byName != nil && len(s.byName) == len(s.Substages) {
		return s.byName[name]
	}
	if i := slices.IndexFunc(s.Substages, func(ss *Substage) bool { return ss.Name == name }); i >= 0 {
		return s.Substages[i]
	}
	return nil
}

// AddSubstage appends ss unless the stage has a substage of that name,
// which it returns instead.
func (s *Stage) AddSubstage(ss *Substage) (first *Substage) {
	if first := s.Substage(ss.Name); first != nil {
		return first
	}
	if s.byName == nil {
		s.byName = map[string]*Substage{}
	}
	s.byName[ss.Name] = ss
	s.Substages = append(s.Substages, ss)
	return nil
}

// Nodes lists the places an issue can be in the stage: the stage itself,
// or its substages in order.
func (s *Stage) Nodes() []*Node {
	if len(s.Substages) == 0 {
		return []*Node{{Path: s.Name, Stage: s}}
	}
	out := make([]*Node, len(s.Substages))
	for i, ss := range s.Substages {
		out[i] = substageNode(s, ss)
	}
	return out
}

func substageNode(s *Stage, ss *Substage) *Node {
	return &Node{Path: s.Name + "." + ss.Name, Stage: s, Sub: ss}
}

// Add appends n unless the flow holds its path already.
func (f *Flow) Add(n *Node) bool {
	if f.Index(n.Path) >= 0 {
		return false
	}
	if f.index == nil {
		f.index = map[string]int{}
	}
	f.index[n.Path] = len(f.Nodes)
	f.Nodes = append(f.Nodes, n)
	return true
}

// Index is the node's position in the flow, or -1.
func (f *Flow) Index(path string) int {
	if f.index == nil || len(f.index) != len(f.Nodes) {
		return slices.IndexFunc(f.Nodes, func(n *Node) bool { return n.Path == path })
	}
	if i, ok := f.index[path]; ok {
		return i
	}
	return -1
}
