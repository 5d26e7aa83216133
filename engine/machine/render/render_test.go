package render_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/machine/render"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages/load"
)

func drawn(t *testing.T, config string, f render.Format) string {
	t.Helper()
	reg := builtin.Registry()
	cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(config), reg)
	require.NoError(t, err)
	flow, err := cfg.Flow("")
	require.NoError(t, err)
	out, err := render.Draw(machine.New(flow, reg), f)
	require.NoError(t, err)
	return out
}

// The reference pipeline of docs/ARCHITECTURE.md §1: the controller stage pr_ready
// steps back to implement.feedback on failure, implementation_review is a
// human review.
func TestDrawTheReferencePipeline(t *testing.T) {
	tests := []struct {
		format render.Format
		want   string
	}{
		{render.Mermaid, `flowchart LR
    backlog["backlog (parking)"]
    implement__code["implement.code"]
    implement__feedback["implement.feedback"]
    pr_ready["pr_ready (controller)"]
    implementation_review["implementation_review (human)"]
    accepted["accepted (completion)"]
    not_doing["not_doing (redirect only, abandon)"]
    backlog -->|advance| implement__code
    implement__code -->|advance| implement__feedback
    implement__feedback -->|advance| pr_ready
    pr_ready -.->|step_back| implement__feedback
    pr_ready -->|advance| implementation_review
    implementation_review -.->|step_back| implement__feedback
    implementation_review -.->|reject| implement__feedback
    implementation_review -->|approve| accepted
    accepted -.->|step_back| implement__feedback
    accepted -.->|step_back| pr_ready
    classDef controller fill:#dbeafe,stroke:#1d4ed8,color:#000
    class pr_ready controller
    classDef human fill:#fef3c7,stroke:#b45309,color:#000
    class implementation_review human
    classDef terminal stroke-width:3px
    class accepted,not_doing terminal
`},
		{render.Dot, `digraph "default" {
    rankdir=LR;
    node [shape=box];
    "backlog" [label="backlog (parking)"];
    "implement.code" [label="implement.code"];
    "implement.feedback" [label="implement.feedback"];
    "pr_ready" [label="pr_ready (controller)", style=filled, fillcolor=lightblue];
    "implementation_review" [label="implementation_review (human)", style=filled, fillcolor=khaki];
    "accepted" [label="accepted (completion)", shape=doublecircle];
    "not_doing" [label="not_doing (redirect only, abandon)", shape=doublecircle];
    "backlog" -> "implement.code" [label="advance"];
    "implement.code" -> "implement.feedback" [label="advance"];
    "implement.feedback" -> "pr_ready" [label="advance"];
    "pr_ready" -> "implement.feedback" [label="step_back", style=dashed];
    "pr_ready" -> "implementation_review" [label="advance"];
    "implementation_review" -> "implement.feedback" [label="step_back", style=dashed];
    "implementation_review" -> "implement.feedback" [label="reject", style=dashed];
    "implementation_review" -> "accepted" [label="approve"];
    "accepted" -> "implement.feedback" [label="step_back", style=dashed];
    "accepted" -> "pr_ready" [label="step_back", style=dashed];
}
`},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			assert.Equal(t, tt.want, drawn(t, testpipeline.Read(t, "controller"), tt.format))
		})
	}
}

// Names Mermaid would misread: a keyword, two names that would share an
// id, and a condition with quotes, `<`, `#` and `&`.
func TestMermaidQuotesWhatItWouldMisread(t *testing.T) {
	out := drawn(t, `stages:
  - name: end
  - name: a-b
    condition: 'title != "x#1" && n < 2'
  - name: a_b
  - name: done
    terminal: completion
`, render.Mermaid)
	for _, want := range []string{
		`    end_["end"]`,
		`    a_b["a-b (if title != #quot;x#35;1#quot; #amp;#amp; n #lt; 2)"]`,
		`    a_b_2["a_b"]`,
		`    end_ -->|advance| a_b`,
		`    a_b -->|advance| a_b_2`,
	} {
		assert.Contains(t, out, want)
	}
}

func TestDotEscapesQuotes(t *testing.T) {
	out := drawn(t, "stages:\n  - name: a\n    condition: 'x == \"y\"'\n  - name: done\n    terminal: completion\n", render.Dot)
	assert.Contains(t, out, `"a" [label="a (if x == \"y\")"];`)
}

func TestDrawRefusesAnUnknownFormat(t *testing.T) {
	_, err := render.Draw(nil, "png")
	assert.ErrorContains(t, err, "use --format mermaid or --format dot")
}
