package check

import (
	"fmt"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
)

// checkDirections refuses a stage reference that would let a failing hook
// carry an issue past a gate. A hook's failure is the one move an agent
// can bring about at will (leave a document empty, write the wrong
// heading), so a step back or a rollback that pointed forward, or a
// redirect that jumped over the host controller's stage, a human review
// or into a completion, would be a way round the pipeline: `on_fail:
// accepted` would merge unreviewed work. Each reference is checked from
// every node of every flow its owner's keys apply to. A flow's nodes are
// indexed once, so that the check costs what the references and nodes
// do, not their product (a pipeline of 20,000 stages has as many of both).
func (v *validator) checkDirections() {
	reported := map[*ledger.Ref]bool{}
	for _, f := range v.cfg.Flows {
		if v.broken[f.Name] {
			continue
		}
		ix := indexFlow(f)
		for _, r := range v.led.Refs {
			to := f.Index(r.Target)
			if r.Target == "" || to < 0 || reported[r] {
				continue // unresolved, or not in the flow: reported elsewhere
			}
			for _, from := range ix.owned(r.From) {
				if msg, hint := ix.skips(r, from, to); msg != "" {
					v.d.Errorf(r.Pos, hint, "%s", msg)
					reported[r] = true
					break
				}
			}
		}
	}
}

// flowIndex is what checkDirections asks of a flow, worked out once.
type flowIndex struct {
	f *stages.Flow
	// byStage holds the positions of each stage's nodes, in flow order.
	byStage map[*stages.Stage][]int
	// nextGate[i] is the position of the first node at or after i that
	// next stops at and nothing may jump over; len(f.Nodes) if none.
	nextGate []int
}

func indexFlow(f *stages.Flow) *flowIndex {
	ix := &flowIndex{f: f, byStage: map[*stages.Stage][]int{}, nextGate: make([]int, len(f.Nodes)+1)}
	for i, n := range f.Nodes {
		ix.byStage[n.Stage] = append(ix.byStage[n.Stage], i)
	}
	ix.nextGate[len(f.Nodes)] = len(f.Nodes)
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		ix.nextGate[i] = ix.nextGate[i+1]
		if n := f.Nodes[i]; !n.RedirectOnly() && gateOf(n) != "" { // next never stops at one reached by redirect only
			ix.nextGate[i] = i
		}
	}
	return ix
}

// owned lists the positions of the nodes o's keys apply at: a stage's own
// keys apply in every substage.
func (ix *flowIndex) owned(o ledger.Owner) []int {
	at := ix.byStage[o.Stage]
	if o.Sub == nil {
		return at
	}
	var out []int
	for _, i := range at {
		if ix.f.Nodes[i].Sub == o.Sub {
			out = append(out, i)
		}
	}
	return out
}

// skips says why moving from the flow's node from to its node to by r is refused,
// "" when it is allowed. Going back is always allowed, and so is going to
// an end that abandons the issue: nothing follows it.
func (ix *flowIndex) skips(r *ledger.Ref, from, to int) (msg, hint string) {
	src, dst := ix.f.Nodes[from], ix.f.Nodes[to]
	if to <= from || dst.Terminal() == stages.TerminalAbandon {
		return "", ""
	}
	if dst.Terminal() == stages.TerminalCompletion {
		return fmt.Sprintf("%s at %s sends issues straight to %s, which completes them: "+
				"a failing hook would finish the work unchecked", r.What, src.Path, dst.Path),
			"send it to an earlier stage, or to one that abandons the issue"
	}
	stepBack := r.Move != stages.MoveRedirect
	if gate := gateOf(src); gate != "" && !stepBack {
		return fmt.Sprintf("%s at %s (%s) sends issues forward to %s: "+
				"a failing hook would move them on without the stage's own gates passing", r.What, src.Path, gate, dst.Path),
			"send it to an earlier stage"
	}
	if g := ix.nextGate[from+1]; g < to {
		n := ix.f.Nodes[g]
		return fmt.Sprintf("%s at %s sends issues forward to %s, past %s (%s): "+
				"a failing hook would skip it", r.What, src.Path, dst.Path, n.Path, gateOf(n)),
			"send it to an earlier stage, or to " + n.Path + " itself"
	}
	// A fix stage reached only by redirect may sit after the agent's stage
	// that sends issues to it; any other forward step back is a mistake.
	if stepBack && (!dst.RedirectOnly() || gateOf(src) != "") {
		hint := "name a stage that comes before " + src.Path + " in the flow"
		if gateOf(src) == "" {
			hint += ", or a `redirect_only` one"
		}
		return fmt.Sprintf("%s at %s goes forward to %s: a %s must go to an earlier stage",
				r.What, src.Path, dst.Path, moveName(r.Move)),
			hint + "; `agenttree graph` shows the order"
	}
	return "", ""
}

// gateOf says what makes n a stage nothing may jump over, "" if nothing.
func gateOf(n *stages.Node) string {
	switch {
	case n.HumanReview():
		return "a human review"
	case n.Controller():
		return "run by the host controller"
	case n.Terminal() == stages.TerminalCompletion:
		return "a completion"
	}
	return ""
}

func moveName(m stages.Move) string {
	if m == stages.MoveRollback {
		return "rollback"
	}
	return "step back"
}
