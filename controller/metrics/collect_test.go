package metrics

import (
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// newEngine is an engine over the cli pipeline in a directory of its own.
func newEngine(t *testing.T) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(testpipeline.Read(t, "cli")), 0o644))
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return engine.New(cfg, store, reg, nil)
}

// transitions is agenttree_transitions_total as a scrape reads it, by
// from and to stage.
func transitions(t *testing.T, m *Metrics) map[[2]string]float64 {
	t.Helper()
	got := map[[2]string]float64{}
	f, ok := scrape(t, m)["agenttree_transitions_total"]
	if !ok {
		return got
	}
	require.Equal(t, dto.MetricType_COUNTER, f.GetType())
	for _, metric := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range metric.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		got[[2]string{labels["from"], labels["to"]}] = metric.GetCounter().GetValue()
	}
	return got
}

// agenttree_transitions_total is a counter: a move is counted once however
// often it is scraped, and stays counted when its issue is removed, while
// the moves made since are added.
func TestTransitionsNeverGoDown(t *testing.T) {
	e := newEngine(t)
	m := New(func() (*engine.Engine, error) { return e, nil })
	created := [2]string{"(new)", "implement.code"}
	create := func(title string) {
		_, err := e.Create(t.Context(), engine.NewIssue{Title: title, Stage: "implement.code"})
		require.NoError(t, err)
	}
	create("Add login page")
	create("Add logout page")
	assert.Equal(t, 2.0, transitions(t, m)[created])
	assert.Equal(t, 2.0, transitions(t, m)[created], "a move read again is not counted again")

	require.NoError(t, os.RemoveAll(statedir.Layout{Root: e.Store.Root()}.Issue(2)))
	assert.Equal(t, 2.0, transitions(t, m)[created], "an issue removed keeps its moves counted")

	create("Add settings page")
	assert.Equal(t, 3.0, transitions(t, m)[created], "a move made after is added")
}

// A history put back shorter (the issue's files restored from a backup)
// keeps what was counted, and the moves made after it are moves.
func TestTransitionsCountMovesAfterAnIssueIsRestored(t *testing.T) {
	e := newEngine(t)
	m := New(func() (*engine.Engine, error) { return e, nil })
	iss, err := e.Create(t.Context(), engine.NewIssue{Title: "Add login page", Stage: "implement.code"})
	require.NoError(t, err)
	dir := statedir.Layout{Root: e.Store.Root()}.Issue(iss.ID)
	backup := filepath.Join(t.TempDir(), "backup")
	require.NoError(t, os.CopyFS(backup, os.DirFS(dir)))

	person := engine.Actor{Kind: engine.ActorHuman}
	move := func(to string) {
		_, err := people.Move(t.Context(), e, iss.ID, person, to, "by hand")
		require.NoError(t, err)
	}
	move("security")
	move("implementation_review")
	toSecurity := [2]string{"implement.code", "security"}
	assert.Equal(t, 1.0, transitions(t, m)[toSecurity])

	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.CopyFS(dir, os.DirFS(backup)))
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	require.Len(t, got.History, 1, "the issue is as it was backed up")
	assert.Equal(t, 1.0, transitions(t, m)[toSecurity], "a move undone stays counted")

	move("security")
	assert.Equal(t, 2.0, transitions(t, m)[toSecurity], "the move made again is counted")
}
