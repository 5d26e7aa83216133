// Package machine is the stage machine of a flow: every move the YAML
// allows (advance, approve at a human review, step back, redirect,
// rollback, escalate, resume), derived from the config and the hooks'
// specs, held by a looplab/fsm. The engine decides where an issue goes,
// in plain code; the machine answers whether the config declares that move
// and records it once it is written (docs/ARCHITECTURE.md).
package machine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/looplab/fsm"

	"github.com/agenttree/agenttree/stages"
)

// Edge is one legal move of the stage machine.
type Edge struct {
	From, To string
	Kind     stages.Move
}

// Machine is the stage machine of one flow: every edge the YAML allows. It
// is built once per flow and is safe for concurrent use: each command
// records its moves on a Run of its own (Start).
type Machine struct {
	flow   *stages.Flow
	edges  []Edge
	index  map[Edge]bool
	events fsm.Events
}

// New derives the machine of flow from the config; specs says what each
// hook may do, so that no hook is known here by name.
func New(flow *stages.Flow, specs stages.HookCatalog) *Machine {
	m := &Machine{flow: flow, index: map[Edge]bool{}}
	for _, n := range flow.Nodes {
		succ := flow.Successors(n.Path)
		for _, s := range succ {
			m.add(n.Path, s.Path, Forward(n))
		}
		m.add(n.Path, n.Path, stages.MoveEscalate)
		m.add(n.Path, n.Path, stages.MoveResume)
		// A stage's own on_failure is an edge; one inherited from an
		// earlier stage is one only where hooks run whose failure it
		// decides (not one that escalates, say, on its own).
		if of := n.OnFailure(); of != nil && of.StepBackTo != "" {
			m.add(n.Path, of.StepBackTo, stages.MoveStepBack)
		} else if to := StepBackTarget(flow, n); to != "" && slices.ContainsFunc(n.Hooks(), defersToStage) {
			m.add(n.Path, to, stages.MoveStepBack)
		}
		// A bare step_back with no step back declared goes to the nearest
		// earlier stage where an agent works (docs/CONFIG.md, "Failure
		// policies").
		if slices.ContainsFunc(n.EveryHook(), stepsBackBare) {
			for _, to := range bareStepBackTargets(flow, n) {
				m.add(n.Path, to, stages.MoveStepBack)
			}
		}
		if to := RejectTarget(flow, n, AgentStage); to != "" && n.HumanReview() {
			m.add(n.Path, to, stages.MoveReject) // a person's verdict, drawn where it goes
		}
		if to := RecheckTarget(flow, n); to != "" && mergesAtEntry(n, specs) {
			// A merge refused for a conflict that a rebase resolved sends
			// the rebased head back through CI and review.
			m.add(n.Path, to, stages.MoveStepBack)
		}
		// Gate and entry hooks move the issue from n; completion hooks move
		// it from wherever the advance just put it.
		leaving := append(append([]*stages.HookEntry(nil), n.Stage.PreCompletion...), n.Stage.PostStart...)
		completing := append([]*stages.HookEntry(nil), n.Stage.PostCompletion...)
		if n.Sub != nil {
			leaving = append(append(leaving, n.Sub.PreCompletion...), n.Sub.PostStart...)
			completing = append(completing, n.Sub.PostCompletion...)
		}
		for _, h := range leaving {
			for _, t := range hookTargets(h, n, specs) {
				m.add(n.Path, t.To, t.Kind)
			}
		}
		for _, h := range completing {
			for _, t := range hookTargets(h, n, specs) {
				m.add(n.Path, t.To, t.Kind)
				for _, s := range succ {
					m.add(s.Path, t.To, t.Kind)
				}
			}
		}
	}
	slices.SortStableFunc(m.edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(flow.Index(a.From), flow.Index(b.From)), cmp.Compare(flow.Index(a.To), flow.Index(b.To)))
	})
	m.events = events(m.edges)
	return m
}

func (m *Machine) add(from, to string, kind stages.Move) {
	e := Edge{From: from, To: to, Kind: kind}
	if !m.index[e] {
		m.index[e] = true
		m.edges = append(m.edges, e)
	}
}

// Forward is how `next` leaves n: a human review is left by approval.
func Forward(n *stages.Node) stages.Move {
	if n.HumanReview() {
		return stages.MoveApprove
	}
	return stages.MoveAdvance
}

// StepBackTarget is where a failure in n steps the issue back to when
// its hook names no stage: n's own on_failure.step_back_to, else that of
// the nearest node before n in flow that declares one (a merge refused at
// the end of the flow goes back where a CI failure would); "" when none.
func StepBackTarget(flow *stages.Flow, n *stages.Node) string {
	return flow.DeclaredStepBack(n.Path)
}

// BareStepBackTarget is where a bare `step_back` of a hook in n (a
// policy that names no stage) sends an issue with vars (nil: whatever
// the conditions say): StepBackTarget, else the nearest node before n
// where an agent works that `next` would not skip; "" when neither,
// which the loader refuses.
func BareStepBackTarget(flow *stages.Flow, n *stages.Node, vars map[string]any) string {
	return flow.BareStepBack(n.Path, vars)
}

// bareStepBackTargets lists every node a bare step_back in n may go to,
// whatever an issue's variables say.
func bareStepBackTargets(flow *stages.Flow, n *stages.Node) []string {
	if to := StepBackTarget(flow, n); to != "" {
		return []string{to}
	}
	var out []string
	for _, a := range flow.AgentsBefore(n.Path) {
		out = append(out, a.Path)
	}
	return out
}

// RejectTarget is where a person's reject at the review n sends the
// issue when it names no stage: n's own on_failure.step_back_to when that
// comes before n, else the nearest node before n where works says an
// agent works; "" when none.
func RejectTarget(flow *stages.Flow, n *stages.Node, works func(*stages.Node) bool) string {
	at := flow.Index(n.Path)
	if of := n.OnFailure(); of != nil && of.StepBackTo != "" {
		if i := flow.Index(of.StepBackTo); i >= 0 && i < at {
			return of.StepBackTo
		}
	}
	for i := at - 1; i >= 0; i-- {
		if works(flow.Nodes[i]) {
			return flow.Nodes[i].Path
		}
	}
	return ""
}

// AgentStage reports whether n is a stage where an agent works, whatever
// its condition says: not the controller's, a review, a parking lot, a
// stage reached only by redirect, or an end.
func AgentStage(n *stages.Node) bool { return n.AgentWorks() }

// RecheckTarget is where a head rebased after the merge at n refused it
// goes to be checked again: the nearest controller stage before n in
// flow (the one that waits for CI); "" when none.
func RecheckTarget(flow *stages.Flow, n *stages.Node) string {
	for i := flow.Index(n.Path) - 1; i >= 0; i-- {
		if flow.Nodes[i].Controller() {
			return flow.Nodes[i].Path
		}
	}
	return ""
}

// mergesAtEntry reports whether an entry hook of n finds conflicts (a
// merge).
func mergesAtEntry(n *stages.Node, specs stages.HookCatalog) bool {
	for _, h := range n.Entering(nil) {
		if spec, ok := specs.Hook(h.Name); ok && spec.Conflicts {
			return true
		}
	}
	return false
}

// hookTargets lists the moves a hook entry may ask for: its on_failure
// and on_conflict policies, and the stage parameters its spec says it
// moves issues to.
func hookTargets(h *stages.HookEntry, n *stages.Node, specs stages.HookCatalog) []Edge {
	var out []Edge
	for _, p := range []*stages.FailurePolicy{h.OnFailure, h.OnConflict, h.OnCIFailure} {
		if p != nil && p.Action == stages.ActionStepBackTo {
			out = append(out, Edge{To: p.Target, Kind: stages.MoveStepBack})
		}
	}
	spec, ok := specs.Hook(h.Name)
	if !ok {
		return out
	}
	for _, p := range spec.Params {
		if p.Type != stages.ParamStageRef {
			continue
		}
		if to, ok := h.Params[p.Name].(string); ok && to != "" {
			out = append(out, Edge{To: to, Kind: p.MoveKind()})
		}
	}
	return out
}

// events turns the edges into the FSM's events, one per move and
// destination ("advance→implement.code"), each allowed from every node
// that has that edge.
func events(edges []Edge) fsm.Events {
	var out fsm.Events
	at := map[string]int{}
	for _, e := range edges {
		name := Event(e.Kind, e.To)
		i, ok := at[name]
		if !ok {
			i = len(out)
			at[name] = i
			out = append(out, fsm.EventDesc{Name: name, Dst: e.To})
		}
		out[i].Src = append(out[i].Src, e.From)
	}
	return out
}

// Event names the FSM event of the move kind to to.
func Event(kind stages.Move, to string) string { return string(kind) + "→" + to }

// Flow is the flow the machine was built from.
func (m *Machine) Flow() *stages.Flow { return m.flow }

// Edges lists every legal move, in flow order.
func (m *Machine) Edges() []Edge { return slices.Clone(m.edges) }

// Check reports whether the pipeline allows kind to move an issue from from
// to to, with an error that says where to look when it does not.
func (m *Machine) Check(from, to string, kind stages.Move) error {
	return m.Start(from).Check(to, kind)
}

// Start returns a run of the machine standing at state, for one command's
// moves: an FSM has one current state, and commands on different issues
// run at once.
func (m *Machine) Start(state string) *Run {
	return &Run{fsm: fsm.NewFSM(state, m.events, nil)}
}

// Run is the machine as one command sees it: where the issue stands, which
// moves are legal from there, and the moves written so far. It has no
// callbacks: the engine decides and writes, and the run records.
type Run struct {
	fsm *fsm.FSM
}

// At is the stage the run stands at.
func (r *Run) At() string { return r.fsm.Current() }

// Check reports whether the pipeline allows kind to move the issue from
// where the run stands to to, with an error that says where to look when
// it does not.
func (r *Run) Check(to string, kind stages.Move) error {
	if r.fsm.Can(Event(kind, to)) {
		return nil
	}
	return fmt.Errorf("the pipeline has no %s edge from %s to %s (see `agenttree graph`)", kind, r.At(), to)
}

// Take records the move kind to to, once it is written. A move to the
// stage the run stands at (a step back to the issue's own stage, an
// escalation) is an edge too; looplab/fsm makes it no transition, and
// it is taken all the same. Take fails for a move the pipeline does not
// allow, and for a move to another stage once ctx is done.
func (r *Run) Take(ctx context.Context, to string, kind stages.Move) error {
	err := r.fsm.Event(ctx, Event(kind, to))
	if errors.As(err, new(fsm.NoTransitionError)) {
		return nil
	}
	return err
}

// Place stands the run at state, for a move the machine does not make: a
// person's order over the pipeline, which need not be an edge of it.
func (r *Run) Place(state string) { r.fsm.SetState(state) }

// defersToStage reports whether a failure of h is decided by its stage's
// on_failure: h has none of its own, or only a bare step_back.
func defersToStage(h *stages.HookEntry) bool {
	return h.OnFailure == nil || h.OnFailure.Action == stages.ActionStepBack
}

// stepsBackBare reports whether a policy of h is a bare step_back.
func stepsBackBare(h *stages.HookEntry) bool {
	return slices.ContainsFunc(h.Policies(), func(p stages.NamedPolicy) bool { return p.Policy.IsBareStepBack() })
}
