package machine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func planned(t *testing.T) *machine.Machine {
	t.Helper()
	reg := builtin.Registry()
	cfg, err := load.File(testpipeline.Path(t, "planned"), reg)
	require.NoError(t, err)
	flow, err := cfg.Flow("")
	require.NoError(t, err)
	return machine.New(flow, reg)
}

func TestMachineRefusesUndeclaredEdges(t *testing.T) {
	m := planned(t)
	for _, tt := range []struct {
		from, to string
		kind     stages.Move
		ok       bool
		why      string
	}{
		{"implement.code", "implement.feedback", stages.MoveAdvance, true, "the next node"},
		{"implement.feedback", "implement.code", stages.MoveRedirect, true, "section_check's on_fail"},
		{"implement.feedback", "implement.code", stages.MoveRollback, true, "the rollback in post_completion"},
		{"pr_ready", "implementation_review", stages.MoveAdvance, true, "the controller's stage leads on"},
		{"plan.review", "implement.code", stages.MoveApprove, true, "a human review is left by approval"},
		{"plan.review", "implement.code", stages.MoveAdvance, false, "a review is left by approval only"},
		{"implement.code", "accepted", stages.MoveAdvance, false, "no skipping"},
		{"backlog", "implement.code", stages.MoveRedirect, false, "no hook redirects from the backlog"},
		{"pr_ready", "pr_ready", stages.MoveEscalate, true, "anywhere may escalate"},
	} {
		err := m.Check(tt.from, tt.to, tt.kind)
		if tt.ok {
			assert.NoError(t, err, tt.why)
		} else {
			assert.ErrorContains(t, err, "see `agenttree graph`", tt.why)
		}
	}
}

// A command's run refuses what the edge table refuses, records the moves
// it allows, and takes a declared move to the stage it stands at like any
// other; an order puts it anywhere.
func TestRunFollowsTheEdges(t *testing.T) {
	m := planned(t)
	r := m.Start("implement.feedback")
	ctx := context.Background()
	require.ErrorContains(t, r.Check("accepted", stages.MoveAdvance), "no advance edge from implement.feedback to accepted")
	require.Error(t, r.Take(ctx, "accepted", stages.MoveAdvance))
	assert.Equal(t, "implement.feedback", r.At(), "a refused move records nothing")
	require.NoError(t, r.Take(ctx, "implement.code", stages.MoveRedirect))
	assert.Equal(t, "implement.code", r.At())
	require.NoError(t, r.Check("implement.code", stages.MoveEscalate))
	require.NoError(t, r.Take(ctx, "implement.code", stages.MoveEscalate), "a move to where the issue is")
	assert.Equal(t, "implement.code", r.At())
	r.Place("pr_ready")
	assert.Equal(t, "pr_ready", r.At())
	assert.NoError(t, r.Check("implementation_review", stages.MoveAdvance))
}

func TestEdgesAreInFlowOrder(t *testing.T) {
	edges := planned(t).Edges()
	require.NotEmpty(t, edges)
	assert.Equal(t, machine.Edge{From: "backlog", To: "backlog", Kind: stages.MoveEscalate}, edges[0], "by source, then destination")
	flow := planned(t).Flow()
	for i := 1; i < len(edges); i++ {
		assert.LessOrEqual(t, flow.Index(edges[i-1].From), flow.Index(edges[i].From))
	}
}

// A person's reject at a review is drawn where it sends the issue: the
// review's own on_failure.step_back_to when it comes before it, else the
// nearest stage before it where an agent works.
func TestRejectEdges(t *testing.T) {
	m := planned(t)
	var rejects []machine.Edge
	for _, e := range m.Edges() {
		if e.Kind == stages.MoveReject {
			rejects = append(rejects, e)
		}
	}
	assert.Equal(t, []machine.Edge{
		{From: "plan.review", To: "plan.draft", Kind: stages.MoveReject},
		{From: "implementation_review", To: "implement.feedback", Kind: stages.MoveReject},
	}, rejects, "past pr_ready, the controller's")

	flow := m.Flow()
	at := func(path string) *stages.Node { return flow.Nodes[flow.Index(path)] }
	none := func(*stages.Node) bool { return false }
	assert.Empty(t, machine.RejectTarget(flow, at("plan.review"), none), "no agent stage before it")
}

// A bare step_back (the design notes' Option A: `on_failure: step_back`
// with no step_back_to anywhere) is an edge to the nearest earlier stage
// where an agent works, and only where such a policy is.
func TestBareStepBackEdges(t *testing.T) {
	reg := builtin.Registry()
	cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(`stages:
  - name: implement
    substages: [code, feedback]
  - name: review
    human_review: true
  - name: pr_ready
    host: controller
    post_start:
      - create_pr:
      - wait_for_ci: {on_failure: step_back}
  - name: merge
    host: controller
    post_start:
      - create_pr:
  - name: accepted
    terminal: completion
ci: {command: "true"}
`), reg)
	require.NoError(t, err)
	flow, err := cfg.Flow("")
	require.NoError(t, err)
	m := machine.New(flow, reg)
	var backs []machine.Edge
	for _, e := range m.Edges() {
		if e.Kind == stages.MoveStepBack {
			backs = append(backs, e)
		}
	}
	assert.Equal(t, []machine.Edge{{From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack}}, backs,
		"past the review, to the agent's stage; none from merge, whose failures go to a person")
	n, _ := cfg.Node("pr_ready")
	assert.Equal(t, "implement.feedback", machine.BareStepBackTarget(flow, n, nil))
	assert.Empty(t, machine.StepBackTarget(flow, n), "no step back is declared")
}

// A bare step_back does not send an issue to a stage `next` would skip
// for it: the nearest earlier agent stage whose condition holds.
func TestBareStepBackSkipsWhatTheIssueSkips(t *testing.T) {
	reg := builtin.Registry()
	cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(`stages:
  - name: implement
    substages:
      - name: code
      - name: docs
        condition: needs_docs
  - name: pr_ready
    host: controller
    post_start:
      - create_pr:
      - wait_for_ci: {on_failure: step_back}
  - name: accepted
    terminal: completion
ci: {command: "true"}
`), reg)
	require.NoError(t, err)
	flow, err := cfg.Flow("")
	require.NoError(t, err)
	m := machine.New(flow, reg)
	for _, to := range []string{"implement.docs", "implement.code"} {
		assert.NoError(t, m.Check("pr_ready", to, stages.MoveStepBack), to)
	}
	n, _ := cfg.Node("pr_ready")
	assert.Equal(t, "implement.docs", machine.BareStepBackTarget(flow, n, map[string]any{"needs_docs": true}))
	assert.Equal(t, "implement.code", machine.BareStepBackTarget(flow, n, map[string]any{"needs_docs": false}))
	assert.Equal(t, "implement.docs", machine.BareStepBackTarget(flow, n, nil), "whatever the conditions say: the nearest")
}

// RejectTarget's two rules give different stages here, so a mix-up of
// them fails: review_a names implement.code, before the nearest agent
// stage (implement.feedback); review_c names none, so the nearest agent
// stage before it is taken, past the controller's. (A step_back_to after
// the review is refused by the loader.)
func TestRejectTargetTellsItsRulesApart(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), ".agenttree.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`stages:
  - name: implement
    substages:
      - name: code
      - name: feedback
  - name: review_a
    human_review: true
    on_failure:
      step_back_to: implement.code
  - name: polish
  - name: pr_ready
    host: controller
  - name: review_c
    human_review: true
  - name: accepted
    terminal: completion
`), 0o644))
	reg := builtin.Registry()
	c, err := load.File(cfg, reg)
	require.NoError(t, err)
	flow, err := c.Flow("")
	require.NoError(t, err)
	at := func(path string) *stages.Node { return flow.Nodes[flow.Index(path)] }

	for _, tt := range []struct {
		review, want, why string
	}{
		{"review_a", "implement.code", "its own step_back_to, not the nearest agent stage (implement.feedback)"},
		{"review_c", "polish", "no step_back_to: the nearest agent stage, past the controller's"},
	} {
		assert.Equal(t, tt.want, machine.RejectTarget(flow, at(tt.review), machine.AgentStage), "%s: %s", tt.review, tt.why)
	}
	var rejects []machine.Edge
	for _, e := range machine.New(flow, reg).Edges() {
		if e.Kind == stages.MoveReject {
			rejects = append(rejects, e)
		}
	}
	assert.Equal(t, []machine.Edge{
		{From: "review_a", To: "implement.code", Kind: stages.MoveReject},
		{From: "review_c", To: "polish", Kind: stages.MoveReject},
	}, rejects, "the machine draws the edges the rules give")
}
