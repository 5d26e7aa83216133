package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/stages"
)

// mermaidClasses are the classDef lines of the kinds of node that are
// marked, with light fills that read in dark mode too.
var mermaidClasses = []struct {
	kind        kind
	name, style string
}{
	{controller, "controller", "fill:#dbeafe,stroke:#1d4ed8,color:#000"},
	{human, "human", "fill:#fef3c7,stroke:#b45309,color:#000"},
	{terminal, "terminal", "stroke-width:3px"},
}

// mermaid draws the machine as a Mermaid flowchart.
func mermaid(m *machine.Machine) string {
	ids := mermaidIDs(m.Flow().Nodes)
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range m.Flow().Nodes {
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", ids[n.Path], mermaidText(label(n)))
	}
	for _, e := range moves(m) {
		arrow := "-.->"
		if forward(e) {
			arrow = "-->"
		}
		fmt.Fprintf(&b, "    %s %s|%s| %s\n", ids[e.From], arrow, e.Kind, ids[e.To])
	}
	for _, c := range mermaidClasses {
		var members []string
		for _, n := range m.Flow().Nodes {
			if kindOf(n) == c.kind {
				members = append(members, ids[n.Path])
			}
		}
		if len(members) > 0 {
			fmt.Fprintf(&b, "    classDef %s %s\n    class %s %s\n", c.name, c.style, strings.Join(members, ","), c.name)
		}
	}
	return b.String()
}

// mermaidKeywords cannot be node ids: Mermaid reads them as statements.
var mermaidKeywords = []string{"end", "graph", "flowchart", "subgraph", "direction", "class", "classDef", "click", "style", "linkStyle", "default"}

// mermaidIDs gives each node an id Mermaid reads as one: the path with
// `.` as `__` and anything else outside letters, digits and `_` as `_`,
// then made unique.
func mermaidIDs(nodes []*stages.Node) map[string]string {
	ids := make(map[string]string, len(nodes))
	taken := map[string]bool{}
	for _, n := range nodes {
		id := strings.Map(func(r rune) rune {
			if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, strings.ReplaceAll(n.Path, ".", "__"))
		for _, k := range mermaidKeywords {
			if strings.EqualFold(id, k) {
				id += "_"
			}
		}
		base := id
		for i := 2; taken[id]; i++ {
			id = base + "_" + strconv.Itoa(i)
		}
		taken[id] = true
		ids[n.Path] = id
	}
	return ids
}

// mermaidText escapes a quoted label: Mermaid has no backslash escapes,
// only entity codes, and reads `#`, `<`, `&` and a backtick as markup.
func mermaidText(s string) string {
	return strings.NewReplacer(
		"#", "#35;",
		`"`, "#quot;",
		"<", "#lt;",
		">", "#gt;",
		"&", "#amp;",
		"`", "#96;",
	).Replace(s)
}
