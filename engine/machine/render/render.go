// Package render draws a flow's stage machine for people: as a Mermaid
// flowchart (pasteable into a GitHub comment or Markdown file) or a
// Graphviz dot graph, with controller and human stages marked and every
// move that is not a step forward (step back, redirect, rollback, a
// person's reject) dashed; and it describes a node in words for lists.
package render

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/stages"
)

// Format is an output a machine is drawn in.
type Format string

const (
	Mermaid Format = "mermaid"
	Dot     Format = "dot"
)

// Draw draws m in format f.
func Draw(m *machine.Machine, f Format) (string, error) {
	switch f {
	case Mermaid:
		return mermaid(m), nil
	case Dot:
		return dot(m), nil
	}
	return "", fmt.Errorf("unknown format %q; use --format mermaid or --format dot", f)
}

// kind is what a node is drawn as, beyond its label.
type kind int

const (
	plain kind = iota
	controller
	human
	terminal
)

func kindOf(n *stages.Node) kind {
	switch {
	case n.Controller():
		return controller
	case n.HumanReview():
		return human
	case n.Terminal() != stages.TerminalNone:
		return terminal
	}
	return plain
}

// forward reports whether an edge is a move forward, drawn solid; step
// backs, redirects and rollbacks are dashed.
func forward(e machine.Edge) bool {
	return e.Kind == stages.MoveAdvance || e.Kind == stages.MoveApprove
}

// moves lists the edges to draw: every move between two nodes (escalate
// and resume stay where they are, and are not drawn).
func moves(m *machine.Machine) []machine.Edge {
	var out []machine.Edge
	for _, e := range m.Edges() {
		if e.From != e.To {
			out = append(out, e)
		}
	}
	return out
}

// dot draws the machine in Graphviz dot.
func dot(m *machine.Machine) string {
	attrs := map[kind]string{
		controller: ", style=filled, fillcolor=lightblue",
		human:      ", style=filled, fillcolor=khaki",
		terminal:   ", shape=doublecircle",
	}
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n    rankdir=LR;\n    node [shape=box];\n", dotQuote(m.Flow().Name))
	for _, n := range m.Flow().Nodes {
		fmt.Fprintf(&b, "    %s [label=%s%s];\n", dotQuote(n.Path), dotQuote(label(n)), attrs[kindOf(n)])
	}
	for _, e := range moves(m) {
		style := ", style=dashed"
		if forward(e) {
			style = ""
		}
		fmt.Fprintf(&b, "    %s -> %s [label=%s%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(string(e.Kind)), style)
	}
	b.WriteString("}\n")
	return b.String()
}

// dotQuote writes s as a dot string: only `"` is escaped there, and a
// backslash starts an escape of its own.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
