package pr

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/hooks"
)

// branchChecks is a forge that answers for a commit with the checks of the
// branch's recent commits, the old head's among them, as a forge that
// reports checks by branch or from a cache could.
type branchChecks struct {
	forge.Forge
	older string // an earlier head of the branch
}

func (f *branchChecks) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	old, err := f.Forge.Checks(ctx, f.older)
	if err != nil {
		return nil, err
	}
	head, err := f.Forge.Checks(ctx, sha)
	return append(old, head...), err
}

// A result for any commit but the PR's head is no fact about the head:
// the old head's failure neither fails the new one nor keeps it waiting,
// whatever the new head's own CI says so far.
func TestCIIgnoresChecksOfOtherCommits(t *testing.T) {
	passed := githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"}
	running := githubtest.CheckRun{Name: "build", Status: "in_progress"}
	tests := []struct {
		name   string
		head   []githubtest.CheckRun // the new head's own checks
		hook   string
		kind   hooks.Kind
		reason string
	}{
		{name: "passed", head: []githubtest.CheckRun{passed}, hook: "wait_for_ci", kind: hooks.KindPass},
		{name: "passed", head: []githubtest.CheckRun{passed}, hook: "pr_ci_passed", kind: hooks.KindPass},
		{name: "running", head: []githubtest.CheckRun{running}, hook: "wait_for_ci", kind: hooks.KindPending, reason: "1 of 1 checks still running on " + shaB[:12]},
		{name: "running", head: []githubtest.CheckRun{running}, hook: "pr_ci_passed", kind: hooks.KindPending, reason: "CI is still running on " + shaB[:12]},
		{name: "not started", hook: "wait_for_ci", kind: hooks.KindPending, reason: "waiting for CI to start on " + shaB[:12]},
		{name: "not started", hook: "pr_ci_passed", kind: hooks.KindPending, reason: "no CI has reported on " + shaB[:12]},
	}
	for _, tt := range tests {
		t.Run(tt.hook+"/"+tt.name, func(t *testing.T) {
			f := newGitHubFixture(t, github.RetryPolicy{})
			n, issue := f.addPR(t, shaA)
			f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure"})
			f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "lint", Status: "in_progress"})
			f.srv.SetHead(n, shaB)
			issue.HeadSHA = shaB
			for _, run := range tt.head {
				f.srv.AddCheckRun(shaB, run)
			}
			f.env.Forge = &branchChecks{Forge: f.client, older: shaA}

			o := runHook(t, f.env, issue, tt.hook, nil)
			require.Equal(t, tt.kind, o.Kind, "reason: %s", o.Reason)
			assert.Contains(t, o.Reason, tt.reason)
			assert.NotEqual(t, hooks.ClassCIFailed, o.Class, "the old head's failure is not the new head's")
			assert.Empty(t, o.Outputs["failed_checks"])
			assert.Empty(t, o.Files[feedbackFile])
			assert.NotContains(t, o.Reason, "lint")
			if tt.kind == hooks.KindPass {
				assert.Equal(t, shaB, o.Outputs["ci_passed_sha"])
			}
		})
	}
}

// laggingRerun is GitHub right after it accepted a rerun: the new run does
// not show yet, and the checks are still the failed run's.
type laggingRerun struct {
	forge.Forge
	reruns int
}

func (f *laggingRerun) Rerun(context.Context, []forge.Check) error {
	f.reruns++
	return nil
}

// A failure that completed before the rerun wait_for_ci asked for is the
// old run's: it waits for the new run instead of reporting the failure
// (which, with the rerun budget spent, would be final).
func TestWaitForCIWaitsForTheRerunItAskedFor(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure",
		StartedAt: f.clock.Now().Add(-2 * time.Minute), CompletedAt: f.clock.Now().Add(-time.Minute)})
	lagging := &laggingRerun{Forge: f.client}
	f.env.Forge = lagging
	params := map[string]any{"rerun_failed": 1}

	o := runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	require.Equal(t, 1, lagging.reruns)

	f.clock.Advance(30 * time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "the failed run is the one before the rerun: %s", o.Reason)
	assert.Contains(t, o.Reason, "1 of 1 checks still running")
	assert.Empty(t, o.Files, "no feedback while the rerun runs")
	assert.Equal(t, 1, lagging.reruns, "the budget is spent")

	// The rerun shows up and passes.
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: "success"})
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	assert.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
}
