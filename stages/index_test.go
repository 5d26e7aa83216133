package stages_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestAddKeepsTheFirstOfAName(t *testing.T) {
	cfg := &stages.Config{}
	impl := &stages.Stage{Name: "implement"}
	require.Nil(t, cfg.AddStage(impl))
	require.Nil(t, cfg.AddStage(&stages.Stage{Name: "done"}))
	assert.Same(t, impl, cfg.AddStage(&stages.Stage{Name: "implement"}), "a second stage of a name")
	assert.Len(t, cfg.Stages, 2)

	code := &stages.Substage{Name: "code", Stage: impl}
	require.Nil(t, impl.AddSubstage(code))
	require.Nil(t, impl.AddSubstage(&stages.Substage{Name: "review", Stage: impl}))
	assert.Same(t, code, impl.AddSubstage(&stages.Substage{Name: "code", Stage: impl}), "a second substage of a name")
	assert.Len(t, impl.Substages, 2)

	f := &stages.Flow{Name: "quick"}
	for _, s := range cfg.Stages {
		for _, n := range s.Nodes() {
			assert.True(t, f.Add(n), n.Path)
		}
	}
	again, _ := cfg.Node("implement.review")
	assert.False(t, f.Add(again), "a path the flow holds")
	assert.Equal(t, []string{"implement.code", "implement.review", "done"}, f.Paths())

	for path, want := range map[string]int{"implement.code": 0, "implement.review": 1, "done": 2, "implement": -1, "nope": -1} {
		assert.Equal(t, want, f.Index(path), path)
	}
	for name, want := range map[string]*stages.Stage{"implement": impl, "done": cfg.Stages[1], "nope": nil} {
		assert.Same(t, want, cfg.Stage(name), name)
	}
	assert.Same(t, code, impl.Substage("code"))
	assert.Nil(t, impl.Substage("nope"))
}

// TestLookupsOfValuesBuiltByHand checks values assembled without the Add
// methods, or grown past them, are searched instead of answered wrongly.
func TestLookupsOfValuesBuiltByHand(t *testing.T) {
	cfg := &stages.Config{}
	require.Nil(t, cfg.AddStage(&stages.Stage{Name: "a"}))
	b := &stages.Stage{Name: "b"}
	cfg.Stages = append(cfg.Stages, b)
	assert.Same(t, b, cfg.Stage("b"), "a stage appended after the index was built")
	assert.NotNil(t, cfg.AddStage(&stages.Stage{Name: "b"}), "a stage appended by hand still counts as the first")

	x := &stages.Substage{Name: "x", Stage: b}
	b.Substages = []*stages.Substage{x}
	assert.Same(t, x, b.Substage("x"))
	assert.Same(t, x, b.AddSubstage(&stages.Substage{Name: "x", Stage: b}))

	n, ok := cfg.Node("b.x")
	require.True(t, ok)
	f := &stages.Flow{Name: "hand", Nodes: []*stages.Node{n}}
	assert.False(t, f.Add(n), "a node listed by hand")
	a, _ := cfg.Node("a")
	assert.True(t, f.Add(a))
	assert.Equal(t, 1, f.Index("a"))
	assert.Equal(t, 0, f.Index("b.x"))
}
