// Package examples holds runnable example configs; this test loads each one
// and moves an issue through it, so an example that rots fails the build.
package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func open(t *testing.T, example string) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(example, stages.FileName))
	require.NoError(t, err)
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	assert.Empty(t, cfg.Warnings, "examples load without warnings")
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return engine.New(cfg, store, reg, nil)
}

var (
	dev      = engine.Actor{Kind: engine.ActorAgent, Role: "developer"}
	reviewer = engine.Actor{Kind: engine.ActorAgent, Role: "reviewer"}
	person   = engine.Actor{Kind: engine.ActorHuman}
)

func step(t *testing.T, e *engine.Engine, id int, who engine.Actor, want engine.Status, wantTo string) {
	t.Helper()
	var res *engine.Result
	var err error
	if who.Kind == engine.ActorHuman {
		if iss, _ := e.Store.Get(id); iss != nil {
			if n, ok := e.Config.Node(iss.Stage); ok && n.HumanReview() {
				res, err = e.Approve(context.Background(), id, who, false)
			}
		}
	}
	if res == nil && err == nil {
		res, err = e.Next(context.Background(), id, who, false)
	}
	require.NoError(t, err)
	require.Equal(t, want, res.Status, "%+v", res)
	assert.Equal(t, wantTo, res.To)
}

func put(t *testing.T, e *engine.Engine, id int, name, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(e.Store.Dir(id), name), []byte(text), 0o644))
}

func TestMinimal(t *testing.T) {
	e := open(t, "minimal")
	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Fix the flaky login test"})
	require.NoError(t, err)
	step(t, e, iss.ID, dev, engine.StatusBlocked, "review")
	put(t, e, iss.ID, "summary.md", "The login test raced the session cache; it now waits for the cache to be warm before it asserts, and a unit test covers the ordering.\n")
	step(t, e, iss.ID, dev, engine.StatusAdvanced, "review")
	step(t, e, iss.ID, dev, engine.StatusWaiting, "review")
	step(t, e, iss.ID, person, engine.StatusAdvanced, "done")
	step(t, e, iss.ID, person, engine.StatusFinal, "done")
}

func TestPythonCompat(t *testing.T) {
	e := open(t, "python-compat")
	quick, err := e.Config.Flow("quick")
	require.NoError(t, err)
	assert.Equal(t, []string{"backlog", "implement.code", "implement.feedback", "accepted"}, quick.Paths())

	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Dark mode", Stage: "plan.draft", Vars: map[string]any{"needs_ui_review": true}})
	require.NoError(t, err)
	put(t, e, iss.ID, "spec.md", "# Spec\n")
	step(t, e, iss.ID, dev, engine.StatusAdvanced, "plan.review")
	step(t, e, iss.ID, dev, engine.StatusWaiting, "plan.review")
	step(t, e, iss.ID, person, engine.StatusAdvanced, "implement.code")
	step(t, e, iss.ID, dev, engine.StatusAdvanced, "implement.feedback")
	put(t, e, iss.ID, "review.md", "## Critical Issues\n- contrast too low\n")
	step(t, e, iss.ID, dev, engine.StatusAdvanced, "implement.code")
	step(t, e, iss.ID, dev, engine.StatusAdvanced, "implement.feedback")
	put(t, e, iss.ID, "review.md", "## Critical Issues\n<!-- - contrast too low (fixed) -->\n")
	step(t, e, iss.ID, dev, engine.StatusAdvanced, "ui_review")
	step(t, e, iss.ID, dev, engine.StatusWaiting, "ui_review")
	step(t, e, iss.ID, person, engine.StatusAdvanced, "accepted")
}

func TestReviewLoop(t *testing.T) {
	e := open(t, "review-loop")
	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Cache invalidation", Vars: map[string]any{"needs_rework": true}})
	require.NoError(t, err)
	put(t, e, iss.ID, "notes.md", "notes\n")
	put(t, e, iss.ID, "review.md", "```yaml\nscore: 4\n```\n")
	step(t, e, iss.ID, reviewer, engine.StatusWaiting, "implement.code")
	for i := 0; i < 2; i++ {
		step(t, e, iss.ID, dev, engine.StatusAdvanced, "implement.review")
		step(t, e, iss.ID, reviewer, engine.StatusAdvanced, "implement.code")
	}
	step(t, e, iss.ID, dev, engine.StatusAdvanced, "implement.review")
	step(t, e, iss.ID, reviewer, engine.StatusWaiting, "done") // budget spent: waits for a person
	step(t, e, iss.ID, person, engine.StatusAdvanced, "done")
}

// The project's own pipeline must always load: it is the one we use.
func TestOwnPipelineLoads(t *testing.T) {
	cfg, err := load.File(filepath.Join("..", stages.FileName), builtin.Registry())
	require.NoError(t, err)
	assert.Empty(t, cfg.Warnings)
	flow, err := cfg.Flow("")
	require.NoError(t, err)
	assert.Equal(t, []string{"backlog", "implement.code", "implement.feedback", "pr_ready", "implementation_review", "accepted", "not_doing"}, flow.Paths())
}
