package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/looplab/fsm"

	"github.com/agenttree/agenttree/stages"
)

// Edge is one legal move of the stage machine.
type Edge struct {
	From, To string
	Kind     string
}

// Machine is the stage machine of one flow: every edge the YAML allows.
// The engine chooses where an issue goes; the machine refuses any move the
// config does not declare.
type Machine struct {
	flow  *stages.Flow
	edges []Edge
	index map[Edge]bool
}

// StageRefs reports which hook parameters name stages; the hook registry
// provides it.
type StageRefs interface {
	Hook(name string) (stages.HookSpec, bool)
}

// NewMachine derives the machine of flow from cfg.
func NewMachine(cfg *stages.Config, flow *stages.Flow, catalog StageRefs) *Machine {
	m := &Machine{flow: flow, index: map[Edge]bool{}}
	add := func(from, to, kind string) {
		e := Edge{From: from, To: to, Kind: kind}
		if !m.index[e] {
			m.index[e] = true
			m.edges = append(m.edges, e)
		}
	}
	for _, n := range flow.Nodes {
		succ := flow.Successors(n.Path)
		for _, s := range succ {
			if n.HumanReview() {
				add(n.Path, s.Path, KindApprove)
			} else {
				add(n.Path, s.Path, KindAdvance)
			}
		}
		add(n.Path, n.Path, KindEscalate)
		add(n.Path, n.Path, KindResume)
		if of := n.OnFailure(); of != nil && of.StepBackTo != "" {
			add(n.Path, of.StepBackTo, KindStepBack)
		}
		// Gate and entry hooks move the issue from n; completion hooks
		// move it from wherever the advance just put it.
		leaving := append([]*stages.HookEntry(nil), n.Stage.PreCompletion...)
		leaving = append(leaving, n.Stage.PostStart...)
		completing := append([]*stages.HookEntry(nil), n.Stage.PostCompletion...)
		if n.Sub != nil {
			leaving = append(leaving, n.Sub.PreCompletion...)
			leaving = append(leaving, n.Sub.PostStart...)
			completing = append(completing, n.Sub.PostCompletion...)
		}
		for _, h := range leaving {
			for _, t := range hookTargets(h, n, catalog) {
				add(n.Path, t.To, t.Kind)
			}
		}
		for _, h := range completing {
			for _, t := range hookTargets(h, n, catalog) {
				add(n.Path, t.To, t.Kind)
				for _, s := range succ {
					add(s.Path, t.To, t.Kind)
				}
			}
		}
	}
	return m
}

// hookTargets lists the moves a hook entry may ask for.
func hookTargets(h *stages.HookEntry, n *stages.Node, catalog StageRefs) []Edge {
	var out []Edge
	if h.OnFailure != nil {
		switch h.OnFailure.Action {
		case "step_back_to":
			out = append(out, Edge{To: h.OnFailure.Target, Kind: KindStepBack})
		case "step_back":
			if of := n.OnFailure(); of != nil && of.StepBackTo != "" {
				out = append(out, Edge{To: of.StepBackTo, Kind: KindStepBack})
			}
		}
	}
	spec, ok := catalog.Hook(h.Name)
	if !ok {
		return out
	}
	kind := KindRedirect
	switch spec.Name {
	case "rollback":
		kind = KindRollback
	case "step_back":
		kind = KindStepBack
	}
	for _, p := range spec.Params {
		if p.Type != stages.ParamStageRef {
			continue
		}
		if to, ok := h.Params[p.Name].(string); ok && to != "" {
			out = append(out, Edge{To: to, Kind: kind})
		}
	}
	return out
}

// Edges lists every legal move, sorted.
func (m *Machine) Edges() []Edge {
	out := append([]Edge(nil), m.edges...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := m.flow.Index(out[i].From), m.flow.Index(out[j].From)
		if a != b {
			return a < b
		}
		return m.flow.Index(out[i].To) < m.flow.Index(out[j].To)
	})
	return out
}

// Check asks the FSM whether kind may move an issue from from to to.
func (m *Machine) Check(ctx context.Context, from, to, kind string) error {
	var events fsm.Events
	for _, e := range m.edges {
		if e.From == from && e.Kind == kind {
			events = append(events, fsm.EventDesc{Name: kind + ":" + e.To, Src: []string{from}, Dst: e.To})
		}
	}
	f := fsm.NewFSM(from, events, nil)
	err := f.Event(ctx, kind+":"+to)
	var same fsm.NoTransitionError
	if err == nil || (from == to && errors.As(err, &same)) {
		return nil
	}
	return fmt.Errorf("the pipeline has no %s edge from %s to %s (see `agenttree graph`)", kind, from, to)
}
