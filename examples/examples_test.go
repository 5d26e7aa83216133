package examples_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/examples"
	"github.com/agenttree/agenttree/forge/local/localtest"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func TestMain(m *testing.M) {
	// The local forge runs CI by starting this test binary again.
	localtest.RunnerMain()
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

var (
	dev      = engine.Actor{Kind: engine.ActorAgent, Role: "developer"}
	reviewer = engine.Actor{Kind: engine.ActorAgent, Role: "reviewer"}
	person   = engine.Actor{Kind: engine.ActorHuman}
)

// noCriticalIssues is a self-review that passes implement.feedback.
const noCriticalIssues = "## Critical Issues\n\n## Notes\nReads well; the tests cover the new page.\n"

// TestExamples loads every example, checks what it warns about, and drives
// one issue through it to its completion stage as its people, agents and
// controller would: real git with a bare origin, the local forge running
// the example's CI (`make test`, which wants ok.txt), and the controller's
// passes in this process.
func TestExamples(t *testing.T) {
	tests := []struct {
		name     string
		warnings []string // the earlier tool's form is expected to warn
		story    func(t *testing.T, r *rig)
	}{
		{name: "pr-ready", story: referenceStory},
		{name: "quick", story: quickStory},
		{name: "review-loop", story: reviewLoopStory},
		{name: "human-review-controller", story: reviewRunsThePRStory},
		{name: "poll-pr-status", story: backgroundCIStory},
		{name: "python-compat", story: pythonCompatStory, warnings: []string{
			":18:23: warning: tools.claude.skip_permissions is not read (write the agent's own flag into `command`, e.g. `command: claude --dangerously-skip-permissions`)",
			":37:9: warning: 1 key the earlier tool read changes nothing here: stages' `color` (agenttree has no use for it: leave it while the earlier tool still reads this file, or delete it)",
			":69:13: warning: `merge_pr` in accepted merges the PRs of flow `quick` with no person's review before it: what passes CI is merged, unreviewed " +
				"(if that is meant, say so: `merge_pr: {require_review: false}`; else put a human review (`human_review: true`) before accepted in the flow)",
		}},
	}
	var names []string
	for _, tt := range tests {
		names = append(names, tt.name)
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tt.name)
			var want []string
			for _, w := range tt.warnings {
				want = append(want, r.e.Config.File+w)
			}
			assert.Equal(t, want, r.warnings, "what loading the example warns about")
			tt.story(t, r)
			iss := r.issue(t, 1)
			n, ok := r.e.Config.Node(iss.Stage)
			require.True(t, ok)
			assert.Equal(t, stages.TerminalCompletion, n.Terminal(), "the issue ends at its completion stage: %s", describe(iss))
			assert.Nil(t, iss.EntryPending, "the completion stage's entry work is done")
			assert.Contains(t, r.mainFiles(t), "feature.txt", "the PR is merged into origin's main")
		})
	}
	assert.ElementsMatch(t, examples.Names(), names, "every example has a story")
}

// referenceStory: CI fails once and the controller steps the issue back;
// the agent fixes it, CI passes, a person approves, the PR is merged.
func referenceStory(t *testing.T, r *rig) {
	id := r.implemented(t, false)
	r.move(t, id, dev, "pr_ready")

	iss := r.settle(t, id, "implement.feedback")
	back := lastMove(iss, stages.MoveStepBack)
	assert.Equal(t, []string{"pr_ready", "implement.feedback", "controller"}, []string{back.From, back.To, back.Actor})
	assert.Contains(t, back.Reason, "CI failed")

	r.fixCI(t)
	r.move(t, id, dev, "pr_ready")
	r.settle(t, id, "implementation_review")
	r.move(t, id, person, "accepted")
}

// quickStory: an issue on the quick flow goes from code to a merged PR
// with no review.
func quickStory(t *testing.T, r *rig) {
	id := r.create(t, "quick")
	r.move(t, id, person, "implement.code")
	r.work(t, id, true)
	r.move(t, id, dev, "pr_ready")
	r.settle(t, id, "accepted")
}

// reviewLoopStory: the reviewer asks for rework three times; twice the
// issue rolls back to the developer, the third time the budget is spent
// and a person moves it on.
func reviewLoopStory(t *testing.T, r *rig) {
	id := r.create(t, "")
	r.move(t, id, person, "implement.code")
	r.work(t, id, true)
	rework := "verdict: rework\n\nThe cache is never invalidated on logout.\n"
	for range 2 {
		r.move(t, id, dev, "implement.review")
		r.put(t, id, "review.md", rework)
		r.move(t, id, reviewer, "implement.code")
	}
	r.move(t, id, dev, "implement.review")
	res := r.next(t, id, reviewer)
	assert.Equal(t, engine.StatusWaiting, res.Status, "the third rollback is refused, and a person decides: %+v", res)
	assert.Contains(t, res.Reasons[0], "max_rollbacks: 2")
	assert.Equal(t, "implement.review", r.issue(t, id).Stage)

	r.move(t, id, person, "pr_ready")
	r.settle(t, id, "implementation_review")
	r.move(t, id, person, "accepted")
	assert.Equal(t, 2, moves(r.issue(t, id), stages.MoveRollback))
}

// reviewRunsThePRStory: entering the review, the controller opens the PR
// and waits for CI; the person approves once CI is green.
func reviewRunsThePRStory(t *testing.T, r *rig) {
	id := r.implemented(t, true)
	r.move(t, id, dev, "implementation_review")

	iss := r.settle(t, id, "implementation_review")
	assert.Equal(t, 1, iss.PRNumber, "the controller opened the PR")
	res := r.next(t, id, dev)
	assert.Equal(t, engine.StatusWaiting, res.Status, "an agent cannot leave the review: %+v", res)
	r.move(t, id, person, "accepted")
}

// backgroundCIStory: the PR is opened and the issue goes straight to the
// review; the controller watches CI in the background, and the person's
// approval passes once CI is green.
func backgroundCIStory(t *testing.T, r *rig) {
	id := r.implemented(t, true)
	r.move(t, id, dev, "pr_open")
	r.settle(t, id, "implementation_review")
	r.approveOnceGreen(t, id)
}

// pythonCompatStory: the earlier tool's pipeline, its manager stages
// acted on by a person.
func pythonCompatStory(t *testing.T, r *rig) {
	quick, err := r.e.Config.Flow("quick")
	require.NoError(t, err)
	assert.Equal(t, []string{"backlog", "implement.code", "implement.feedback", "pr_ready", "accepted"}, quick.Paths())

	id := r.create(t, "")
	r.move(t, id, person, "define")
	r.move(t, id, person, "plan.draft")
	r.put(t, id, "spec.md", "# Spec\nA checkout page.\n")
	r.move(t, id, dev, "plan.review")
	r.move(t, id, person, "implement.code")
	r.work(t, id, true)
	r.move(t, id, dev, "implement.feedback")
	r.put(t, id, "review.md", noCriticalIssues)
	r.move(t, id, dev, "pr_ready", "ui_review is skipped: the issue does not set needs_ui_review")
	r.settle(t, id, "implementation_review")
	r.move(t, id, person, "accepted")
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
