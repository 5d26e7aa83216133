package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/stages"
)

func (a *app) graphCmd() *cobra.Command {
	var format, flowName string
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Draw a flow's stage machine (every legal move) as Mermaid or Graphviz dot",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, reg, err := a.loadConfig()
			if err != nil {
				return err
			}
			flow, err := cfg.Flow(flowName)
			if err != nil {
				return err
			}
			m := machine.New(flow, reg)
			switch format {
			case "mermaid":
				fmt.Fprint(a.out, mermaid(m))
			case "dot":
				fmt.Fprint(a.out, dot(m))
			default:
				return fmt.Errorf("unknown format %q; use --format mermaid or --format dot", format)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "mermaid", "mermaid or dot")
	cmd.Flags().StringVar(&flowName, "flow", "", "flow to draw (default: the default flow)")
	return cmd
}

// words is how a place that shows nodes names their traits.
type words struct {
	human, parking, terminal string
	// agentRole names an agent stage's role ("agent: developer").
	agentRole bool
}

var (
	// listWords are `agenttree stages`' words.
	listWords = words{human: "human review", parking: "parking lot", terminal: "terminal: ", agentRole: true}
	// graphWords are the graph's node labels', kept short.
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

// describeNode is a node's line in `agenttree stages`.
func describeNode(n *stages.Node) string { return strings.Join(traits(n, listWords), ", ") }

// nodeLabel is a node's label in the graph.
func nodeLabel(n *stages.Node) string {
	tags := traits(n, graphWords)
	if len(tags) == 0 {
		return n.Path
	}
	return n.Path + " (" + strings.Join(tags, ", ") + ")"
}

func nodeID(path string) string { return strings.NewReplacer(".", "__", "-", "_").Replace(path) }

// forward reports whether an edge is a move forward, drawn solid; step
// backs, redirects and rollbacks are dashed.
func forward(e machine.Edge) bool {
	return e.Kind == stages.MoveAdvance || e.Kind == stages.MoveApprove
}

// mermaid draws the machine as a Mermaid flowchart.
func mermaid(m *machine.Machine) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range m.Flow().Nodes {
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", nodeID(n.Path), strings.ReplaceAll(nodeLabel(n), `"`, "'"))
	}
	for _, e := range m.Edges() {
		if e.From == e.To {
			continue
		}
		arrow := "-.->"
		if forward(e) {
			arrow = "-->"
		}
		fmt.Fprintf(&b, "    %s %s|%s| %s\n", nodeID(e.From), arrow, e.Kind, nodeID(e.To))
	}
	return b.String()
}

// dot draws the machine in Graphviz dot.
func dot(m *machine.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n    rankdir=LR;\n    node [shape=box];\n", m.Flow().Name)
	for _, n := range m.Flow().Nodes {
		attrs := ""
		switch {
		case n.Controller():
			attrs = ", style=filled, fillcolor=lightblue"
		case n.HumanReview():
			attrs = ", style=filled, fillcolor=khaki"
		case n.Terminal() != stages.TerminalNone:
			attrs = ", shape=doublecircle"
		}
		fmt.Fprintf(&b, "    %q [label=%q%s];\n", n.Path, nodeLabel(n), attrs)
	}
	for _, e := range m.Edges() {
		if e.From == e.To {
			continue
		}
		style := ", style=dashed"
		if forward(e) {
			style = ""
		}
		fmt.Fprintf(&b, "    %q -> %q [label=%q%s];\n", e.From, e.To, e.Kind, style)
	}
	b.WriteString("}\n")
	return b.String()
}
