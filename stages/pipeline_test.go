package stages_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func TestFlowIndex(t *testing.T) {
	cfg, err := load.File("load/testdata/python-style.yaml", builtin.Registry())
	require.NoError(t, err)
	for _, f := range cfg.Flows {
		for i, n := range f.Nodes {
			assert.Equal(t, i, f.Index(n.Path), "%s in flow %s", n.Path, f.Name)
		}
		assert.Equal(t, -1, f.Index("nowhere"), f.Name)
		assert.Equal(t, -1, f.Index("implement"), "a stage with substages is not a node")
	}
	hotfix, err := cfg.Flow("hotfix")
	require.NoError(t, err)
	assert.Equal(t, -1, hotfix.Index("implement.fix"), "in the pipeline, not in this flow")

	t.Run("a flow built by hand", func(t *testing.T) {
		a, _ := cfg.Node("backlog")
		b, _ := cfg.Node("spec")
		f := &stages.Flow{Name: "hand", Nodes: []*stages.Node{a, b}}
		assert.Equal(t, 1, f.Index("spec"))
		assert.Equal(t, -1, f.Index("triage"))
		next, _, err := f.Next("backlog", nil)
		require.NoError(t, err)
		assert.Equal(t, "spec", next.Path)
	})
	t.Run("nodes added after loading", func(t *testing.T) {
		f, err := cfg.Flow("not_doing")
		require.NoError(t, err)
		extra, _ := cfg.Node("accepted")
		grown := *f
		grown.Nodes = append(append([]*stages.Node(nil), f.Nodes...), extra)
		assert.Equal(t, 1, grown.Index("accepted"))
	})
}

func TestNodeLookups(t *testing.T) {
	loaded, err := load.File("load/testdata/canonical.yaml", builtin.Registry())
	require.NoError(t, err)
	// The same stages without the indexes loading builds.
	byHand := &stages.Config{Stages: loaded.Stages}

	tests := []struct {
		path string
		want string // "" when there is no such node
	}{
		{"backlog", "backlog"},
		{"implement", "implement.code"},
		{"implement.feedback", "implement.feedback"},
		{"implement.nope", ""},
		{"backlog.code", ""},
		{"nope", ""},
		{"", ""},
	}
	for name, cfg := range map[string]*stages.Config{"loaded": loaded, "by hand": byHand} {
		for _, tt := range tests {
			n, ok := cfg.Node(tt.path)
			if tt.want == "" {
				assert.False(t, ok, "%s: %q", name, tt.path)
				continue
			}
			require.True(t, ok, "%s: %q", name, tt.path)
			assert.Equal(t, tt.want, n.Path, name)
		}
	}

	from, ok := loaded.Node("implement.feedback")
	require.True(t, ok)
	refs := map[string]string{
		"code":           "implement.code", // a substage of from's stage first
		"backlog":        "backlog",        // then a stage
		"implement":      "implement.code", // a stage with substages: its first
		"accepted":       "accepted",       //
		"ui_review.code": "",               // no such substage
		"feedbak":        "",               // no such thing
	}
	for ref, want := range refs {
		n, ok := loaded.ResolveRef(from, ref)
		if want == "" {
			assert.False(t, ok, ref)
			continue
		}
		require.True(t, ok, ref)
		assert.Equal(t, want, n.Path, ref)
	}
}

func TestNextSkipsRedirectOnlyAndFalseConditions(t *testing.T) {
	cfg, err := load.File("load/testdata/compatible.yaml", builtin.Registry())
	require.NoError(t, err)
	flow, _ := cfg.Flow("")
	tests := []struct {
		from string
		vars map[string]any
		want string
	}{
		{"implement.code", nil, "implement.feedback"},
		{"implement.feedback", nil, "accepted"},
		{"implement.feedback", map[string]any{"needs_ui_review": true}, "ui_review"},
		{"implement.feedback", map[string]any{"needs_ui_review": false}, "accepted"},
		{"accepted", nil, ""},
	}
	for _, tt := range tests {
		next, _, err := flow.Next(tt.from, tt.vars)
		require.NoError(t, err)
		got := ""
		if next != nil {
			got = next.Path
		}
		assert.Equal(t, tt.want, got, "from %s with %v", tt.from, tt.vars)
	}
}
