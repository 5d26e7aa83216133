package pr

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/hooks"
)

// ci_polling.timeout_s is how long one CI run may take from when it
// starts: a run that waited in the queue longer than the timeout has all
// of it once it runs, and times out only when it has run that long.
func TestGitHubWaitForCITimeoutRunsFromCIStart(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	build := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build"}) // queued
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "docs", Status: "completed", Conclusion: "skipped"})
	params := map[string]any{"timeout": 10 * time.Minute, "new_run_timeout": 30 * time.Minute}

	o := runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	assert.Contains(t, o.Reason, "1 of 2 checks queued on "+shaA[:12]+", waiting for CI to start (0s so far)")

	f.clock.Advance(15 * time.Minute)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "queued past the timeout is not a timeout: %s", o.Reason)
	assert.Contains(t, o.Reason, "(15m0s so far)")

	f.srv.SetCheckRunStatus(build, "in_progress") // starts now
	f.clock.Advance(10*time.Minute - time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "it has run for less than the timeout: %s", o.Reason)
	assert.Contains(t, o.Reason, "1 of 2 checks still running")

	f.clock.Advance(time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassPollingTimeout, o.Class)
	assert.Contains(t, o.Reason, "still running after 10m0s from its start at "+f.clock.Now().Add(-10*time.Minute).Format(time.RFC3339))
	assert.Equal(t, o.Reason, o.Outputs["failure_reason"])
}

// A run that never leaves the queue is bounded by new_run_timeout from the
// push, and says it was queued.
func TestGitHubWaitForCIQueuedNeverStarts(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "waiting"})
	params := map[string]any{"timeout": 5 * time.Minute, "new_run_timeout": 20 * time.Minute}

	require.Equal(t, hooks.KindPending, runHook(t, f.env, issue, "wait_for_ci", params).Kind)
	f.clock.Advance(20*time.Minute - time.Second)
	o := runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)

	f.clock.Advance(time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassNoNewCI, o.Class)
	assert.Contains(t, o.Reason, "CI on "+shaA[:12]+" was queued for 20m0s after the push and never started")
	assert.Empty(t, o.Files, "nothing failed: no feedback")
}

// A wait that timed out restarts its clock: a person resuming it (or the
// next wait on the same head) gives a run that started long before the
// whole timeout again, from then.
func TestGitHubWaitForCIResumedWaitGetsAFreshClock(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "in_progress"})
	params := map[string]any{"timeout": 5 * time.Minute}

	require.Equal(t, hooks.KindPending, runHook(t, f.env, issue, "wait_for_ci", params).Kind)
	f.clock.Advance(5 * time.Minute)
	o := runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.ClassPollingTimeout, o.Class, "reason: %s", o.Reason)
	assert.Equal(t, f.clock.Now().Format(time.RFC3339Nano), issue.Watch[watchSince], "the wait restarted")

	f.clock.Advance(time.Hour) // a person looks an hour later and resumes
	issue.Watch[hooks.WatchResumedAt] = f.clock.Now().Format(time.RFC3339Nano)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "the check started 65m ago, but this wait is new: %s", o.Reason)
	f.clock.Advance(5*time.Minute - time.Second)
	require.Equal(t, hooks.KindPending, runHook(t, f.env, issue, "wait_for_ci", params).Kind)
	f.clock.Advance(time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	assert.Equal(t, hooks.ClassPollingTimeout, o.Class, "reason: %s", o.Reason)
}

// The local forge starts CI at once: its run's timeout runs from the wait's
// first sight of it, whatever the forge's clock says.
func TestLocalWaitForCITimeout(t *testing.T) {
	done := filepath.Join(t.TempDir(), "done")
	l := newLocalPR(t, "until [ -f '"+done+"' ]; do sleep 0.1; done")
	clock := newTestClock()
	l.env.Now = clock.Now
	l.openPR(t)
	t.Cleanup(func() {
		// Let the CI run end before its directories go.
		require.NoError(t, os.WriteFile(done, nil, 0o644))
		pollUntilDone(t, l, "wait_for_ci")
	})
	params := map[string]any{"timeout": 10 * time.Minute}

	clock.Advance(time.Minute)
	o := runHook(t, l.env, l.issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	require.Eventually(t, func() bool {
		o = runHook(t, l.env, l.issue, "wait_for_ci", params)
		return o.Kind == hooks.KindPending && o.Reason == "1 of 1 checks still running on "+l.issue.HeadSHA[:12]
	}, 30*time.Second, 50*time.Millisecond, "last: %s", o.Reason)

	clock.Advance(10*time.Minute - time.Second)
	o = runHook(t, l.env, l.issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	clock.Advance(time.Second)
	o = runHook(t, l.env, l.issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassPollingTimeout, o.Class)
	assert.Contains(t, o.Reason, "still running after 10m0s")
}

// A run the CI service cancelled or timed out says nothing of the code: it
// is run again once, and if it does not finish again the failure is
// ci_cancelled, with no feedback file and no ci_failed; a real failure
// beside it is still a failure.
func TestGitHubWaitForCICancelledIsNoCodeFailure(t *testing.T) {
	for _, conclusion := range []string{"cancelled", "timed_out"} {
		t.Run(conclusion, func(t *testing.T) {
			f := newGitHubFixture(t, github.RetryPolicy{})
			_, issue := f.addPR(t, shaA)
			f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: conclusion})

			o := runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindPending, o.Kind, "run again once: %s", o.Reason)
			assert.Len(t, f.srv.Reruns(), 1)

			rerun := f.latestRun(t, shaA, "test")
			f.srv.CompleteCheckRun(rerun.ID, conclusion)
			o = runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, hooks.ClassCICancelled, o.Class)
			assert.Contains(t, o.Reason, "did not finish")
			assert.Empty(t, o.Files, "nothing failed: no feedback")
			assert.Len(t, f.srv.Reruns(), 1, "once")
		})
	}
	t.Run("beside a real failure", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure"})
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "lint", Status: "completed", Conclusion: "cancelled"})
		o := runHook(t, f.env, issue, "wait_for_ci", nil)
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassCIFailed, o.Class)
	})
}
