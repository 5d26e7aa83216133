package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

var (
	agent      = engine.Actor{Kind: engine.ActorAgent, Role: "developer"}
	human      = engine.Actor{Kind: engine.ActorHuman}
	controller = engine.Actor{Kind: engine.ActorController}
)

func newEngine(t *testing.T, text string) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	reg := registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return engine.New(cfg, store, reg, nil)
}

func create(t *testing.T, e *engine.Engine, stage string, vars map[string]any) *issues.Issue {
	t.Helper()
	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Add login page", Stage: stage, Vars: vars})
	require.NoError(t, err)
	return iss
}

func write(t *testing.T, e *engine.Engine, id int, name, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(e.Store.Dir(id), name), []byte(text), 0o644))
}

func next(t *testing.T, e *engine.Engine, id int, a engine.Actor) *engine.Result {
	t.Helper()
	res, err := e.Next(context.Background(), id, a, false)
	require.NoError(t, err)
	return res
}

func TestWalkThroughThePipeline(t *testing.T) {
	e := newEngine(t, testpipeline.Read(t, "planned"))
	iss := create(t, e, "", nil)
	assert.Equal(t, "backlog", iss.Stage)
	assert.Equal(t, "issue-001-add-login-page", iss.Branch)

	res := next(t, e, iss.ID, agent)
	assert.Equal(t, engine.StatusWaiting, res.Status, "agents do not start parked issues")
	assert.Contains(t, res.Reasons[0], "parked")

	res = next(t, e, iss.ID, human)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "plan.draft", res.To)

	res = next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusBlocked, res.Status)
	assert.Contains(t, res.Reasons[0], "plan.md is missing")

	write(t, e, iss.ID, "plan.md", "# Plan\n")
	res = next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "plan.review", res.To)

	// The earlier tool let agents walk out of review substages.
	res = next(t, e, iss.ID, agent)
	assert.Equal(t, engine.StatusWaiting, res.Status)
	res, err := e.Approve(context.Background(), iss.ID, agent, false)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusWaiting, res.Status, "agents cannot approve")
	container := engine.ActorFromEnv(func(k string) string { return map[string]string{"AGENTTREE_CONTAINER": "1"}[k] })
	res, err = e.Approve(context.Background(), iss.ID, container, false)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusWaiting, res.Status, "a container is an agent")

	res, err = e.Approve(context.Background(), iss.ID, human, false)
	require.NoError(t, err)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, stages.MoveApprove, res.Kind)
	assert.Equal(t, "implement.code", res.To)

	res = next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "implement.feedback", res.To)

	// Critical issues left: the gate redirects back to code.
	write(t, e, iss.ID, "review.md", "## Critical Issues\n- SQL injection in login\n")
	res = next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, stages.MoveRedirect, res.Kind)
	assert.Equal(t, "implement.code", res.To)
	next(t, e, iss.ID, agent)

	write(t, e, iss.ID, "review.md", "## Critical Issues\n\nNone.\n")
	res = next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "pr_ready", res.To)

	res = next(t, e, iss.ID, agent)
	assert.Equal(t, engine.StatusWaiting, res.Status, "agents cannot leave a controller stage")
	res = next(t, e, iss.ID, controller)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "implementation_review", res.To)

	res = next(t, e, iss.ID, controller)
	assert.Equal(t, engine.StatusWaiting, res.Status, "the controller does not approve")
	res = next(t, e, iss.ID, human)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, stages.MoveApprove, res.Kind)
	assert.Equal(t, "accepted", res.To)

	res = next(t, e, iss.ID, human)
	assert.Equal(t, engine.StatusFinal, res.Status)

	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	var kinds []string
	for _, h := range got.History {
		kinds = append(kinds, string(h.Kind)+":"+h.To+":"+string(h.Actor))
	}
	assert.Equal(t, []string{
		"create:backlog:human", "advance:plan.draft:human", "advance:plan.review:agent",
		"approve:implement.code:human", "advance:implement.feedback:agent", "redirect:implement.code:agent",
		"advance:implement.feedback:agent", "advance:pr_ready:agent", "advance:implementation_review:controller",
		"approve:accepted:human",
	}, kinds)
	assert.Equal(t, len(got.History), got.Version)

	events, err := os.ReadFile(filepath.Join(e.Store.HostDir(iss.ID), "events.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, len(got.History), len(splitLines(string(events))))
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i, c := range s {
		if c == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func TestRoleMismatchWaits(t *testing.T) {
	e := newEngine(t, testpipeline.Read(t, "planned"))
	iss := create(t, e, "implement.code", nil)
	reviewer := engine.Actor{Kind: engine.ActorAgent, Role: "reviewer"}
	res := next(t, e, iss.ID, reviewer)
	assert.Equal(t, engine.StatusWaiting, res.Status)
	assert.Contains(t, res.Reasons[0], "belongs to role developer")
}

func TestDryRunChangesNothing(t *testing.T) {
	e := newEngine(t, testpipeline.Read(t, "planned"))
	iss := create(t, e, "implement.code", nil)
	res, err := e.Next(context.Background(), iss.ID, agent, true)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusAdvanced, res.Status)
	assert.True(t, res.DryRun)
	got, _ := e.Store.Get(iss.ID)
	assert.Equal(t, "implement.code", got.Stage)
	assert.Equal(t, 1, got.Version)
}

func TestRollbackInPostCompletionWinsAndIsBounded(t *testing.T) {
	e := newEngine(t, testpipeline.Read(t, "planned"))
	iss := create(t, e, "implement.feedback", map[string]any{"wants_rework": true})
	write(t, e, iss.ID, "review.md", "## Critical Issues\n")

	res := next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, stages.MoveRollback, res.Kind)
	assert.Equal(t, "implement.code", res.To)
	got, _ := e.Store.Get(iss.ID)
	last := got.History[len(got.History)-1]
	assert.Equal(t, []string{"implement.feedback", "implement.code", "rollback"}, []string{last.From, last.To, string(last.Kind)},
		"one step back, not forward and back")

	next(t, e, iss.ID, agent) // back to feedback
	res = next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusWaiting, res.Status, "the budget is spent: the agent waits for a person")
	assert.Contains(t, res.Reasons[0], "max_rollbacks: 1")
	got, _ = e.Store.Get(iss.ID)
	assert.Equal(t, "implement.feedback", got.Stage)

	res = next(t, e, iss.ID, human)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "pr_ready", res.To, "a person decides to move on")
	assert.NotEmpty(t, res.Warnings)
}

func TestMachineIsBuiltOncePerFlow(t *testing.T) {
	e := newEngine(t, testpipeline.Read(t, "planned"))
	flow, err := e.Config.Flow("")
	require.NoError(t, err)
	assert.Same(t, e.Machine(flow), e.Machine(flow))
}
