package render

import (
	"strings"

	"github.com/agenttree/agenttree/stages"
)

// words is how a place that shows nodes names their traits.
type words struct {
	human, parking, terminal string
	// agentRole names an agent stage's role ("agent: developer").
	agentRole bool
}

var (
	// listWords are those of lists of nodes (`agenttree stages`, status).
	listWords = words{human: "human review", parking: "a person (parking lot)", terminal: "terminal: ", agentRole: true}
	// graphWords are those of a graph's node labels, kept short.
	graphWords = words{human: "human", parking: "parking"}
)

// traits names what is special about n: who acts, and how issues move
// through it.
func traits(n *stages.Node, w words) []string {
	var out []string
	switch {
	case n.Terminal() != stages.TerminalNone && w.agentRole:
	case n.Controller():
		out = append(out, "controller")
	case n.HumanReview():
		out = append(out, w.human)
	case n.ParkingLot():
		// Nobody works on a parked issue: its role's agent starts once a
		// person moves it on.
	case w.agentRole:
		out = append(out, "agent: "+string(n.Role()))
	}
	if n.ParkingLot() {
		out = append(out, w.parking)
	}
	if n.RedirectOnly() {
		out = append(out, "redirect only")
	}
	if t := n.Terminal(); t != stages.TerminalNone {
		out = append(out, w.terminal+string(t))
	}
	if c := n.Condition(); c != nil {
		out = append(out, "if "+c.Src)
	}
	return out
}

// Describe says in words who acts at n and how issues move through it,
// as a list of nodes shows it: "agent: developer", "controller",
// "human review, redirect only", "terminal: completion".
func Describe(n *stages.Node) string { return strings.Join(traits(n, listWords), ", ") }

// label is a node's label in a graph: its path, and its traits in short.
func label(n *stages.Node) string {
	tags := traits(n, graphWords)
	if len(tags) == 0 {
		return n.Path
	}
	return n.Path + " (" + strings.Join(tags, ", ") + ")"
}
