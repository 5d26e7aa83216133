package engine

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/stages"
)

func nodeID(path string) string { return strings.NewReplacer(".", "__", "-", "_").Replace(path) }

func nodeNote(n *stages.Node) string {
	var tags []string
	switch {
	case n.Controller():
		tags = append(tags, "controller")
	case n.HumanReview():
		tags = append(tags, "human")
	}
	if n.ParkingLot() {
		tags = append(tags, "parking")
	}
	if n.RedirectOnly() {
		tags = append(tags, "redirect only")
	}
	if t := n.Terminal(); t != "" {
		tags = append(tags, string(t))
	}
	if c := n.Condition(); c != nil {
		tags = append(tags, "if "+c.Src)
	}
	if len(tags) == 0 {
		return n.Path
	}
	return n.Path + " (" + strings.Join(tags, ", ") + ")"
}

// Mermaid draws the machine as a Mermaid flowchart.
func (m *Machine) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range m.flow.Nodes {
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", nodeID(n.Path), strings.ReplaceAll(nodeNote(n), `"`, "'"))
	}
	for _, e := range m.Edges() {
		if e.From == e.To {
			continue
		}
		arrow := "-->"
		if e.Kind != KindAdvance && e.Kind != KindApprove {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "    %s %s|%s| %s\n", nodeID(e.From), arrow, e.Kind, nodeID(e.To))
	}
	return b.String()
}

// Dot draws the machine in Graphviz dot.
func (m *Machine) Dot() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n    rankdir=LR;\n    node [shape=box];\n", m.flow.Name)
	for _, n := range m.flow.Nodes {
		attrs := ""
		switch {
		case n.Controller():
			attrs = ", style=filled, fillcolor=lightblue"
		case n.HumanReview():
			attrs = ", style=filled, fillcolor=khaki"
		case n.Terminal() != "":
			attrs = ", shape=doublecircle"
		}
		fmt.Fprintf(&b, "    %q [label=%q%s];\n", n.Path, nodeNote(n), attrs)
	}
	for _, e := range m.Edges() {
		if e.From == e.To {
			continue
		}
		style := ""
		if e.Kind != KindAdvance && e.Kind != KindApprove {
			style = ", style=dashed"
		}
		fmt.Fprintf(&b, "    %q -> %q [label=%q%s];\n", e.From, e.To, e.Kind, style)
	}
	b.WriteString("}\n")
	return b.String()
}
