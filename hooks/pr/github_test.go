package pr

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// The PR hooks against the GitHub client and the fake GitHub server. Every
// hook call goes through Builtin().Run as the engine makes it, and the
// outcome's watch updates are applied to the issue snapshot between calls,
// as the engine does, so the one-poll-per-call hooks see their own state.

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// ghFixture is a GitHub client talking to a fake GitHub, with an injected
// clock for the hooks and instant retry sleeps for the client.
type ghFixture struct {
	srv    *githubtest.Server
	client *github.Client
	clock  *testClock
	env    *hooks.Env
	sleeps atomic.Int64
}

func newGitHubFixture(t *testing.T, retry github.RetryPolicy) *ghFixture {
	t.Helper()
	// Keep any gh configuration of the developer out of the client.
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	// The fake stamps check runs with the hooks' clock: a check's start
	// and the wait's clock are one time line, as they are on GitHub.
	clock := newTestClock()
	f := &ghFixture{srv: githubtest.New(t, githubtest.WithClock(clock.Now)), clock: clock}
	client, err := github.New(context.Background(), github.Options{
		Repo: f.srv.Owner + "/" + f.srv.Name, Host: "github.com", Token: f.srv.Token, BaseURL: f.srv.URL,
		Retry: retry,
		Sleep: func(ctx context.Context, d time.Duration) error { f.sleeps.Add(1); return ctx.Err() },
	})
	require.NoError(t, err)
	f.client = client
	f.env = &hooks.Env{Forge: client, Config: prConfig(), Now: f.clock.Now}
	return f
}

// addPR opens PR for branch issue-7 at head and returns an issue snapshot
// that knows it.
func (f *ghFixture) addPR(t *testing.T, head string) (int, *hooks.Issue) {
	t.Helper()
	n := f.srv.AddPR(githubtest.PR{Title: "Add login", Branch: "issue-7", HeadSHA: head})
	return n, &hooks.Issue{ID: 7, Title: "Add login", Stage: "pr_ready", Branch: "issue-7", PRNumber: n, HeadSHA: head,
		Dir: t.TempDir(), DefaultBranch: "main", Watch: map[string]string{}, Outputs: map[string]string{}}
}

// checkRun returns the current state of a check run of the fake.
func (f *ghFixture) checkRun(t *testing.T, sha string, id int64) githubtest.CheckRun {
	t.Helper()
	for _, c := range f.srv.CheckRuns(sha) {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check run %d on %s", id, sha)
	return githubtest.CheckRun{}
}

// latestRun is the newest check run of sha named name (a rerun's).
func (f *ghFixture) latestRun(t *testing.T, sha, name string) githubtest.CheckRun {
	t.Helper()
	var out githubtest.CheckRun
	for _, c := range f.srv.CheckRuns(sha) {
		if c.Name == name && c.ID > out.ID {
			out = c
		}
	}
	require.NotZero(t, out.ID, "no check run %s on %s", name, sha)
	return out
}

func TestGitHubWaitForCIPendingThenSuccess(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	n, issue := f.addPR(t, shaA)
	build := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build"})
	lint := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "lint", Status: "in_progress"})
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "docs", Status: "completed", Conclusion: "skipped"})
	f.srv.AddStatus(shaA, "ci/external", "pending", "https://ci.example.com/1")

	o := runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, 30*time.Second, o.RetryAfter, "the configured poll interval")
	assert.Contains(t, o.Reason, "3 of 4 checks still running")
	assert.Equal(t, shaA, issue.Watch[watchHead], "the watch remembers the head it saw")
	assert.Equal(t, f.clock.Now().Format(time.RFC3339Nano), issue.Watch[watchSince])
	assert.Equal(t, shaA, o.Outputs["head_sha"])

	f.clock.Advance(time.Minute)
	f.srv.CompleteCheckRun(build, "success")
	f.srv.AddStatus(shaA, "ci/external", "success", "https://ci.example.com/1")
	o = runHook(t, f.env, issue, "wait_for_ci", map[string]any{"poll_interval": 5 * time.Second})
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, 5*time.Second, o.RetryAfter, "poll_interval overrides the config")
	assert.Contains(t, o.Reason, "1 of 4 checks still running")

	f.clock.Advance(time.Minute)
	f.srv.CompleteCheckRun(lint, "neutral")
	o = runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindPass, o.Kind, "success, neutral and skipped all pass: %s", o.Reason)
	assert.Empty(t, o.Reason)
	assert.Equal(t, shaA, o.Outputs["head_sha"])
	assert.Equal(t, fmt.Sprint(n), o.Outputs["pr_number"])
	assert.Equal(t, "https://github.com/octo/app/pull/1", o.Outputs["pr_url"])
	assert.Equal(t, map[string]string{"ci_feedback.md": ""}, o.Files, "success removes an earlier failure's feedback")
	assert.Equal(t, shaA, o.Outputs["ci_passed_sha"], "the verified commit")
}

func TestGitHubWaitForCIFailureWritesFeedback(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	build := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "in_progress"})
	test := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	lint := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "lint", Status: "in_progress"})

	var log strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&log, "2025-03-01T12:00:%02d.1234567Z step %d\n", i%60, i)
	}
	log.WriteString("2025-03-01T12:01:00.0000000Z --- FAIL: TestLogin (0.01s)\n")
	f.srv.SetJobLog(f.checkRun(t, shaA, build).JobID, log.String())

	o := runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)

	f.srv.CompleteCheckRun(build, "failure")
	f.srv.CompleteCheckRun(test, "timed_out")
	f.srv.CompleteCheckRun(lint, "success")
	o = runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassCIFailed, o.Class)
	assert.Contains(t, o.Reason, "CI failed on "+shaA[:12])
	assert.Contains(t, o.Reason, "build (failure)")
	assert.Contains(t, o.Reason, "test (timed_out)")
	assert.NotContains(t, o.Reason, "lint")

	buildURL := f.checkRun(t, shaA, build).HTMLURL
	testURL := f.checkRun(t, shaA, test).HTMLURL
	assert.Equal(t, "build, test", o.Outputs["failed_checks"])
	assert.Equal(t, buildURL, o.Outputs["ci_url"])
	assert.Equal(t, o.Reason, o.Outputs["failure_reason"])
	assert.Equal(t, shaA, o.Outputs["head_sha"])

	fb, ok := o.Files["ci_feedback.md"]
	require.True(t, ok, "wait_for_ci writes ci_feedback.md on a failure; files: %v", o.Files)
	assert.Contains(t, fb, "- **build**: failure — "+buildURL)
	assert.Contains(t, fb, "- **test**: timed_out — "+testURL)
	assert.NotContains(t, fb, "**lint**")
	assert.Contains(t, fb, "commit "+shaA)
	// The tail of the job log, without the Actions timestamps.
	assert.Contains(t, fb, "--- FAIL: TestLogin (0.01s)")
	assert.Contains(t, fb, "\nstep 300\n")
	assert.Contains(t, fb, "\nstep 102\n")
	assert.NotContains(t, fb, "\nstep 100\n", "only the last 200 lines of the log")
	assert.NotContains(t, fb, "2025-03-01T12:")
}

func TestGitHubWaitForCIIgnoresResultsOfAnOldHead(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	n, issue := f.addPR(t, shaA)
	old := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "in_progress"})
	params := map[string]any{"rerun_failed": 1}

	o := runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	require.Equal(t, shaA, issue.Watch[watchHead])
	firstSeen := issue.Watch[watchSince]
	issue.Watch[watchReruns] = "1" // the old head spent its rerun

	// A push moves the head; the old head's run finishes late, failing.
	f.clock.Advance(20 * time.Minute)
	f.srv.SetHead(n, shaB)
	f.srv.CompleteCheckRun(old, "failure")

	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "a failure on the old head is no fact about the new one: %s", o.Reason)
	assert.Contains(t, o.Reason, "waiting for CI to start on "+shaB[:12])
	assert.Empty(t, o.Files)
	assert.Equal(t, shaB, o.Outputs["head_sha"])
	assert.Equal(t, shaB, issue.Watch[watchHead], "the watch follows the new head")
	assert.NotEqual(t, firstSeen, issue.Watch[watchSince], "the new head's clock starts at the push")
	assert.Equal(t, f.clock.Now().Format(time.RFC3339Nano), issue.Watch[watchSince])
	assert.NotContains(t, issue.Watch, watchReruns, "the rerun budget is per head")

	// 49 minutes after the first head was seen, but 29 after the push: the
	// new head still has time to start CI.
	f.clock.Advance(29 * time.Minute)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)

	// The new head's own run fails: with the budget reset it is rerun once.
	id := f.srv.AddCheckRun(shaB, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure"})
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	assert.Contains(t, o.Reason, "rerunning build (failure) (rerun 1 of 1 on "+shaB[:12])
	assert.Equal(t, []int64{f.checkRun(t, shaB, id).JobID}, f.srv.Reruns())
	f.srv.CompleteCheckRun(f.latestRun(t, shaB, "build").ID, "success")
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	assert.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, shaB, o.Outputs["head_sha"])
}

func TestGitHubWaitForCINoNewCI(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	params := map[string]any{"new_run_timeout": 10 * time.Minute}

	o := runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	assert.Contains(t, o.Reason, "waiting for CI to start on "+shaA[:12]+" (0s so far)")

	f.clock.Advance(10*time.Minute - time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	assert.Contains(t, o.Reason, "(9m59s so far)")

	f.clock.Advance(time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassNoNewCI, o.Class)
	assert.Contains(t, o.Reason, "no CI run started on "+shaA[:12]+" within 10m0s")
	assert.Equal(t, o.Reason, o.Outputs["failure_reason"])
	assert.Empty(t, o.Files)

	// The config's new_run_timeout applies without the parameter.
	_, other := f.addPR(t, shaB)
	o = runHook(t, f.env, other, "wait_for_ci", nil)
	require.Equal(t, hooks.KindPending, o.Kind)
	f.clock.Advance(29 * time.Minute)
	assert.Equal(t, hooks.KindPending, runHook(t, f.env, other, "wait_for_ci", nil).Kind)
	f.clock.Advance(time.Minute)
	o = runHook(t, f.env, other, "wait_for_ci", nil)
	assert.Equal(t, hooks.ClassNoNewCI, o.Class, "reason: %s", o.Reason)
}

func TestGitHubWaitForCIPollingTimeout(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "in_progress"})
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "lint", Status: "completed", Conclusion: "success"})
	params := map[string]any{"timeout": 5 * time.Minute}

	o := runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	f.clock.Advance(5*time.Minute - time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)

	f.clock.Advance(time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", params)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassPollingTimeout, o.Class)
	assert.Contains(t, o.Reason, "still running after 5m0s")
	assert.Contains(t, o.Reason, "1 of 2 checks pending")
	assert.Equal(t, o.Reason, o.Outputs["failure_reason"])
}

func TestGitHubWaitForCIRerunsAFlakyFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rerun  string // conclusion of the rerun
		kind   hooks.Kind
		reruns int
	}{
		{name: "the rerun passes", rerun: "success", kind: hooks.KindPass, reruns: 1},
		{name: "the rerun fails too", rerun: "failure", kind: hooks.KindFail, reruns: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGitHubFixture(t, github.RetryPolicy{})
			_, issue := f.addPR(t, shaA)
			first := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure"})
			f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "lint", Status: "completed", Conclusion: "success"})
			params := map[string]any{"rerun_failed": 1}

			o := runHook(t, f.env, issue, "wait_for_ci", params)
			require.Equal(t, hooks.KindPending, o.Kind, "the first failure is rerun: %s", o.Reason)
			assert.Contains(t, o.Reason, "rerunning test (failure) (rerun 1 of 1")
			assert.Empty(t, o.Files, "no feedback for a failure being rerun")
			assert.Equal(t, []int64{f.checkRun(t, shaA, first).JobID}, f.srv.Reruns())
			assert.Equal(t, "1", issue.Watch[watchReruns])

			rerun := f.latestRun(t, shaA, "test")
			require.NotEqual(t, first, rerun.ID, "the fake starts a new run")
			o = runHook(t, f.env, issue, "wait_for_ci", params)
			require.Equal(t, hooks.KindPending, o.Kind, "the rerun is queued: %s", o.Reason)

			f.clock.Advance(3 * time.Minute)
			f.srv.CompleteCheckRun(rerun.ID, tc.rerun)
			o = runHook(t, f.env, issue, "wait_for_ci", params)
			require.Equal(t, tc.kind, o.Kind, "reason: %s", o.Reason)
			assert.Len(t, f.srv.Reruns(), tc.reruns, "the budget is one rerun")
			if tc.kind == hooks.KindFail {
				assert.Equal(t, hooks.ClassCIFailed, o.Class)
				assert.Equal(t, "test", o.Outputs["failed_checks"])
				assert.Contains(t, o.Files["ci_feedback.md"], "**test**: failure")
				// Polling again does not rerun again.
				o = runHook(t, f.env, issue, "wait_for_ci", params)
				assert.Equal(t, hooks.KindFail, o.Kind)
				assert.Len(t, f.srv.Reruns(), 1)
			}
		})
	}
}

// A person resuming an issue after a CI failure asks for one more try:
// the failed checks run again, once, whatever rerun_failed says.
func TestGitHubWaitForCIRerunsOnceAfterAResume(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure"})
	o := runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "no rerun budget: %s", o.Reason)

	f.clock.Advance(time.Minute)
	issue.Watch[hooks.WatchResumedAt] = f.clock.Now().UTC().Format(time.RFC3339Nano)
	f.clock.Advance(time.Second)
	o = runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindPending, o.Kind, "resumed: the failure is tried again: %s", o.Reason)
	assert.Len(t, f.srv.Reruns(), 1)

	rerun := f.latestRun(t, shaA, "test")
	f.clock.Advance(time.Minute)
	f.srv.CompleteCheckRun(rerun.ID, "failure")
	o = runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "the try failed too: %s", o.Reason)
	assert.Len(t, f.srv.Reruns(), 1, "once per resume")
}

// A failed commit status (CI outside GitHub) cannot be rerun through the
// API. wait_for_ci with rerun_failed must still report the CI failure once
// the rerun budget cannot be spent, not wait forever; and a rerun that was
// started must be counted against the budget.
//
// A commit status posted by an outside CI service cannot be rerun through
// the forge: its failure is the CI failure, reported to the agent, and a
// check run failing beside it is not rerun without limit.
func TestGitHubWaitForCIRerunOfACommitStatus(t *testing.T) {
	t.Run("status only", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		f.srv.AddStatus(shaA, "ci/jenkins", "failure", "https://jenkins.example.com/job/7")
		params := map[string]any{"rerun_failed": 1}

		var o hooks.Outcome
		for range 3 {
			o = runHook(t, f.env, issue, "wait_for_ci", params)
			if o.Kind != hooks.KindPending {
				break
			}
		}
		require.Equal(t, hooks.KindFail, o.Kind, "a failed status that cannot be rerun is a CI failure: %s (class %s)", o.Reason, o.Class)
		assert.Equal(t, hooks.ClassCIFailed, o.Class)
		assert.Contains(t, o.Files["ci_feedback.md"], "**ci/jenkins**: failure — https://jenkins.example.com/job/7")
	})
	t.Run("status and check run", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		f.srv.AddStatus(shaA, "ci/jenkins", "failure", "https://jenkins.example.com/job/7")
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure"})
		params := map[string]any{"rerun_failed": 1}

		var o hooks.Outcome
		for range 4 {
			o = runHook(t, f.env, issue, "wait_for_ci", params)
			if o.Kind != hooks.KindPending {
				break
			}
			// Whatever was rerun fails again.
			if run := f.latestRun(t, shaA, "test"); run.Status != "completed" {
				f.srv.CompleteCheckRun(run.ID, "failure")
			}
		}
		assert.LessOrEqual(t, len(f.srv.Reruns()), 1, "rerun_failed: 1 allows one rerun, got %v", f.srv.Reruns())
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s (class %s)", o.Reason, o.Class)
		assert.Equal(t, hooks.ClassCIFailed, o.Class)
	})
}

func TestGitHubErrorsAreNeverCIFailures(t *testing.T) {
	retry := github.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond, MaxWait: 5 * time.Second}
	for _, tc := range []struct {
		name  string
		fault githubtest.Fault
		class hooks.Class // of the outcome once the retries are spent
	}{
		{name: "500", fault: githubtest.Fault500, class: hooks.ClassForge},
		{name: "502", fault: githubtest.Fault502, class: hooks.ClassForge},
		{name: "secondary rate limit", fault: githubtest.FaultSecondary, class: hooks.ClassRateLimit},
		{name: "429", fault: githubtest.Fault429, class: hooks.ClassRateLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGitHubFixture(t, retry)
			_, issue := f.addPR(t, shaA)
			build := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "in_progress"})
			fault := tc.fault.On(githubtest.EndpointCheckRuns)

			// Retried within the call: the answer is the real one.
			f.srv.FailNext(2, fault)
			o := runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
			assert.Contains(t, o.Reason, "1 of 1 checks still running")
			assert.Empty(t, o.Class)
			assert.Equal(t, 2, f.srv.FaultsSent())
			assert.Positive(t, f.sleeps.Load(), "the client waited (through the injected sleep)")

			f.srv.CompleteCheckRun(build, "success")
			f.srv.FailNext(2, fault)
			o = runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, 4, f.srv.FaultsSent())

			// Retries exhausted: pending on a GitHub problem, never a CI failure,
			// for wait_for_ci and for the pr_ci_passed gate alike.
			f.srv.FailNext(100, fault)
			o = runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, tc.class, o.Class)
			assert.Positive(t, o.RetryAfter)
			assert.Empty(t, o.Files)
			assert.NotContains(t, o.Outputs, "failed_checks")
			o = runHook(t, f.env, issue, "pr_ci_passed", nil)
			require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, tc.class, o.Class)
			assert.Empty(t, o.Files)

			// A failing check behind the outage is not reported as failing
			// either, until GitHub answers.
			f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure"})
			o = runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
			assert.NotEqual(t, hooks.ClassCIFailed, o.Class)

			f.srv.ClearFaults()
			o = runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, hooks.ClassCIFailed, o.Class)
		})
	}
}

func TestGitHubPRCIPassed(t *testing.T) {
	t.Run("green", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "docs", Status: "completed", Conclusion: "skipped"})
		o := runHook(t, f.env, issue, "pr_ci_passed", nil)
		assert.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, shaA, o.Outputs["head_sha"])
		assert.Empty(t, o.Warnings)
	})
	t.Run("the ci_check alias", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
		assert.Equal(t, hooks.KindPass, runHook(t, f.env, issue, "ci_check", nil).Kind)
	})
	t.Run("pending", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "in_progress"})
		f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "lint", Status: "completed", Conclusion: "success"})
		o := runHook(t, f.env, issue, "pr_ci_passed", nil)
		require.Equal(t, hooks.KindPending, o.Kind, "a gate does not wait, and CI still running is no verdict: %s", o.Reason)
		assert.Contains(t, o.Reason, "CI is still running on "+shaA[:12]+" (1 of 2 checks pending)")
		assert.Contains(t, o.Reason, "agenttree pr wait 7")
		assert.Empty(t, o.Files)
	})
	t.Run("failing", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		id := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure"})
		f.srv.SetJobLog(f.checkRun(t, shaA, id).JobID, "compiling\nmain.go:3: undefined: x\n")
		o := runHook(t, f.env, issue, "pr_ci_passed", nil)
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassCIFailed, o.Class)
		assert.Contains(t, o.Reason, "build (failure)")
		fb := o.Files["ci_feedback.md"]
		assert.Contains(t, fb, "- **build**: failure — "+f.checkRun(t, shaA, id).HTMLURL)
		assert.Contains(t, fb, "main.go:3: undefined: x")
		assert.Equal(t, shaA, o.Outputs["head_sha"])
	})
	t.Run("no checks", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		_, issue := f.addPR(t, shaA)
		o := runHook(t, f.env, issue, "pr_ci_passed", nil)
		assert.Equal(t, hooks.KindPending, o.Kind, "no checks is no verdict")
		assert.Contains(t, o.Reason, "no CI has reported")
		assert.Empty(t, o.Outputs["ci_passed_sha"])
	})
}

// pr_ci_passed declares the outputs failed_checks and ci_url, and a stage's
// on_failure message uses them ({{failed_checks}}, {{ci_url}}).
//
// The gate's CI failure keeps what ciFailure found (failed_checks,
// ci_url, failure_reason) beside the PR's facts.
func TestGitHubPRCIPassedFailureOutputs(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	id := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure"})
	o := runHook(t, f.env, issue, "pr_ci_passed", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, shaA, o.Outputs["head_sha"])
	assert.Equal(t, "build", o.Outputs["failed_checks"], "outputs: %v", o.Outputs)
	assert.Equal(t, f.checkRun(t, shaA, id).HTMLURL, o.Outputs["ci_url"], "outputs: %v", o.Outputs)
	assert.Equal(t, o.Reason, o.Outputs["failure_reason"], "outputs: %v", o.Outputs)
}

func TestGitHubPRMergeable(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	n, issue := f.addPR(t, shaA)

	// UNKNOWN for a while: the hook polls a few times, then answers later.
	f.srv.SetMergeable(n, "MERGEABLE", 50)
	o := runHook(t, f.env, issue, "pr_mergeable", nil)
	require.Equal(t, hooks.KindPending, o.Kind, "GitHub is still computing: %s", o.Reason)
	assert.Positive(t, o.RetryAfter)
	assert.Contains(t, o.Reason, "still working out whether PR #1 merges cleanly")

	// UNKNOWN for a read or two: resolved within the same call.
	f.srv.SetMergeable(n, "MERGEABLE", 2)
	o = runHook(t, f.env, issue, "pr_mergeable", nil)
	assert.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)

	f.srv.SetMergeable(n, "CONFLICTING", 0)
	o = runHook(t, f.env, issue, "pr_mergeable", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassConflict, o.Class)
	assert.Contains(t, o.Reason, "PR #1 conflicts with main")
	assert.Equal(t, map[string]string{"conflict_files": "", "failure_reason": o.Reason}, o.Outputs)

	// wait_for_ci does not count CI results of a conflicting PR.
	f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	o = runHook(t, f.env, issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassConflict, o.Class)
	assert.Contains(t, o.Reason, "its CI results do not count until then")
	assert.Equal(t, o.Reason, o.Outputs["failure_reason"])
	assert.Empty(t, o.Outputs["ci_passed_sha"])
}

func TestGitHubPRApproved(t *testing.T) {
	for _, tc := range []struct {
		decision string
		self     bool
		kind     hooks.Kind
		reason   string
	}{
		{decision: "APPROVED", kind: hooks.KindPass},
		{decision: "CHANGES_REQUESTED", kind: hooks.KindFail, reason: "PR #1 has changes requested; address the review on https://github.com/octo/app/pull/1"},
		{decision: "REVIEW_REQUIRED", kind: hooks.KindFail, reason: "PR #1 is not approved yet"},
		{decision: "", kind: hooks.KindFail, reason: "PR #1 is not approved yet"},
		{decision: "", self: true, kind: hooks.KindPass},
		{decision: "CHANGES_REQUESTED", self: true, kind: hooks.KindPass},
	} {
		t.Run(fmt.Sprintf("%q self=%v", tc.decision, tc.self), func(t *testing.T) {
			f := newGitHubFixture(t, github.RetryPolicy{})
			n, issue := f.addPR(t, shaA)
			f.srv.SetReviewDecision(n, tc.decision)
			f.env.Config.AllowSelfApprove = tc.self
			o := runHook(t, f.env, issue, "pr_approved", nil)
			require.Equal(t, tc.kind, o.Kind, "reason: %s", o.Reason)
			assert.Contains(t, o.Reason, tc.reason)
		})
	}
}

func TestGitHubMergePR(t *testing.T) {
	t.Run("merges the verified head", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		n, issue := f.addPR(t, shaA)
		covered(issue)
		o := runHook(t, f.env, issue, "merge_pr", map[string]any{"method": "squash"})
		require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, "merged PR #1 into main (squash)", o.Message)
		pr, _ := f.srv.PR(n)
		assert.Equal(t, "merged", pr.State)
		assert.Equal(t, "squash", pr.MergeMethod)
		_, ok := f.srv.Branch("issue-7")
		assert.False(t, ok, "delete_branch defaults to true")
		assert.Equal(t, 1, f.srv.Requests(githubtest.EndpointMergePull))

		// Already merged: passes again without merging again.
		o = runHook(t, f.env, issue, "merge_pr", map[string]any{"method": "squash"})
		assert.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, 1, f.srv.Requests(githubtest.EndpointMergePull))
	})
	t.Run("merged by hand", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		n, issue := f.addPR(t, shaA)
		f.srv.SetState(n, "merged")
		o := runHook(t, f.env, issue, "merge_pr", nil)
		assert.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, 0, f.srv.Requests(githubtest.EndpointMergePull))
	})
	t.Run("keeps the branch", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		n, issue := f.addPR(t, shaA)
		covered(issue)
		o := runHook(t, f.env, issue, "merge_pr", map[string]any{"method": "rebase", "delete_branch": false})
		require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		pr, _ := f.srv.PR(n)
		assert.Equal(t, "rebase", pr.MergeMethod)
		_, ok := f.srv.Branch("issue-7")
		assert.True(t, ok)
	})
	t.Run("head moved since CI verified it", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		n, issue := f.addPR(t, shaA)
		covered(issue)
		f.srv.SetHead(n, shaB) // a push after the gates passed on shaA
		o := runHook(t, f.env, issue, "merge_pr", nil)
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassUnverifiedHead, o.Class)
		assert.Contains(t, o.Reason, "PR #1 was not merged at its head "+shaB[:12])
		assert.Contains(t, o.Reason, "CI passed on "+shaA[:12]+", not on it")
		assert.Contains(t, o.Reason, "a person approved "+shaA[:12]+", not it")
		pr, _ := f.srv.PR(n)
		assert.Equal(t, "open", pr.State)
		assert.Equal(t, 0, f.srv.Requests(githubtest.EndpointMergePull))
	})
	t.Run("conflict found at merge time", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		n, issue := f.addPR(t, shaA)
		covered(issue)
		f.srv.SetMergeable(n, "CONFLICTING", 0)
		o := runHook(t, f.env, issue, "merge_pr", nil)
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassConflict, o.Class)
		assert.Contains(t, o.Reason, "PR #1 cannot be merged: ")
		assert.Contains(t, o.Reason, "PR #1 conflicts with main;")
		assert.Equal(t, map[string]string{"conflict_files": "", "failure_reason": o.Reason}, o.Outputs,
			"GitHub cannot name the files; the outputs are there all the same")
		pr, _ := f.srv.PR(n)
		assert.Equal(t, "open", pr.State)
	})
	t.Run("closed", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		n, issue := f.addPR(t, shaA)
		f.srv.SetState(n, "closed")
		o := runHook(t, f.env, issue, "merge_pr", nil)
		require.Equal(t, hooks.KindFail, o.Kind)
		assert.Contains(t, o.Reason, "closed without merging")
	})
	t.Run("close_pr", func(t *testing.T) {
		f := newGitHubFixture(t, github.RetryPolicy{})
		n, issue := f.addPR(t, shaA)
		o := runHook(t, f.env, issue, "close_pr", map[string]any{"comment": "Closing {{issue_title}}"})
		require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		pr, _ := f.srv.PR(n)
		assert.Equal(t, "closed", pr.State)
		assert.Equal(t, []string{"Closing Add login"}, pr.Comments)
		assert.Equal(t, hooks.KindPass, runHook(t, f.env, issue, "close_pr", map[string]any{"comment": "again"}).Kind)
		pr, _ = f.srv.PR(n)
		assert.Len(t, pr.Comments, 1, "closing twice comments once")
	})
}

// mirroredForge is the GitHub client with one thing of a real GitHub the
// fake cannot know by itself: a branch pushed to the git remote (here a
// bare repository) exists on GitHub when the PR is opened.
type mirroredForge struct {
	*github.Client
	srv  *githubtest.Server
	bare string
	t    *testing.T
}

func (m *mirroredForge) EnsurePR(ctx context.Context, req forge.NewPR) (*forge.PR, bool, error) {
	if sha := branchIn(m.t, m.bare, req.Branch); sha != "" {
		m.srv.SetBranch(req.Branch, sha)
	}
	return m.Client.EnsurePR(ctx, req)
}

func TestGitHubCreatePR(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	bare, work := gitRemoteRepo(t)
	head := revParse(t, work, "HEAD")
	f.env.Forge = &mirroredForge{Client: f.client, srv: f.srv, bare: bare, t: t}
	f.env.Git = func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} }
	issue := &hooks.Issue{ID: 7, Title: "Add login", Stage: "pr_ready", Branch: "issue-7", Dir: t.TempDir(), WorkDir: work, DefaultBranch: "main"}
	params := map[string]any{"labels": []string{"agenttree"}, "draft": true}

	o := runHook(t, f.env, issue, "create_pr", params)
	require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, "opened PR #1: https://github.com/octo/app/pull/1", o.Message)
	assert.Equal(t, map[string]string{"pr_number": "1", "pr_url": "https://github.com/octo/app/pull/1", "head_sha": head}, o.Outputs)
	assert.Equal(t, head, branchIn(t, bare, "issue-7"), "the branch was pushed to the remote")
	pr, ok := f.srv.PR(1)
	require.True(t, ok)
	assert.Equal(t, "issue-7", pr.Branch)
	assert.Equal(t, "main", pr.Base)
	assert.Equal(t, head, pr.HeadSHA)
	assert.Equal(t, "Add login", pr.Title)
	assert.Contains(t, pr.Body, "Issue 7: Add login")
	assert.Contains(t, pr.Body, "`issue-7`")
	assert.True(t, pr.Draft)
	assert.Equal(t, []string{"agenttree"}, pr.Labels)

	// Called again (a retry, a restarted controller): the same PR.
	o = runHook(t, f.env, issue, "create_pr", params)
	require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, "PR #1 is open: https://github.com/octo/app/pull/1", o.Message)
	assert.Equal(t, "1", o.Outputs["pr_number"])
	assert.Equal(t, 1, f.srv.PRCount())
	assert.Equal(t, 1, f.srv.Requests(githubtest.EndpointCreatePull))

	// GitHub failing to answer the PR's creation (a 502 past the
	// retries) is an outage waited out, not a failure that would step
	// the issue back to its agent.
	fresh := *issue
	fresh.Branch = "issue-8"
	gittest.Run(t, work, "branch", "issue-8")
	f.srv.FailNext(4, githubtest.Fault502.On(githubtest.EndpointListPulls)) // every try of the default policy
	o = runHook(t, f.env, &fresh, "create_pr", nil)
	require.Equal(t, hooks.KindPending, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassForge, o.Class)
	assert.Contains(t, o.Reason, "will retry")
	o = runHook(t, f.env, &fresh, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, "once GitHub answers: %s", o.Reason)

	// A branch that is not in the work tree cannot be pushed: a clear
	// failure, no PR.
	gone := *issue
	gone.Branch = "no-such-branch"
	o = runHook(t, f.env, &gone, "create_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind)
	assert.Contains(t, o.Reason, "push no-such-branch to origin: branch no-such-branch does not exist here")
	assert.Equal(t, 2, f.srv.PRCount())
}

func TestPRHooksWithoutAForge(t *testing.T) {
	names := []string{"create_pr", "wait_for_ci", "pr_ci_passed", "check_conflicts", "pr_mergeable", "rebase", "pr_approved", "merge_pr", "close_pr"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			issue := &hooks.Issue{ID: 7, Title: "Add login", Branch: "issue-7", PRNumber: 1, HeadSHA: shaA, Dir: t.TempDir(), DefaultBranch: "main"}
			env := &hooks.Env{Config: prConfig(), Git: func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} }}
			o := runHook(t, env, issue, name, nil)
			require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, "hook `"+name+"` needs a forge, and none is set up: set `forge: local` or `forge: github` in .agenttree.yaml", o.Reason)

			o = runHook(t, nil, issue, name, nil)
			require.Equal(t, hooks.KindFail, o.Kind, "no env at all: %s", o.Reason)
			assert.Contains(t, o.Reason, "needs a forge")
		})
	}
}

func TestPRHooksWhenTheForgeCannotOpen(t *testing.T) {
	bare, work := gitRemoteRepo(t)
	opened := 0
	lazy := forge.Lazy(func() (forge.Forge, error) {
		opened++
		return nil, fmt.Errorf("github: %w: no GitHub token for github.com: run `gh auth login`", forge.ErrAuth)
	})
	env := &hooks.Env{Forge: lazy, Config: prConfig(), Git: func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} }}
	issue := &hooks.Issue{ID: 7, Title: "Add login", Branch: "issue-7", Dir: t.TempDir(), WorkDir: work, DefaultBranch: "main"}

	o := runHook(t, env, issue, "create_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.True(t, strings.HasPrefix(o.Reason, "forge unavailable: "), "what runs the hook names it: %s", o.Reason)
	assert.Contains(t, o.Reason, "no GitHub token for github.com")
	assert.Empty(t, branchIn(t, bare, "issue-7"), "nothing is pushed when the forge cannot be opened")
	assert.Empty(t, gittest.Run(t, bare, "for-each-ref", "refs/heads/issue-7"))

	issue.PRNumber = 1
	for _, name := range []string{"wait_for_ci", "pr_ci_passed", "merge_pr"} {
		o = runHook(t, env, issue, name, nil)
		require.Equal(t, hooks.KindFail, o.Kind, "%s: a broken setup is no outage to wait out: %s", name, o.Reason)
		assert.Contains(t, o.Reason, "forge unavailable", name)
	}
	assert.Equal(t, 1, opened, "the forge is opened once")
}

// An approval covers the commit it was given on; commits pushed since need
// a review of their own, even where GitHub keeps the approval.
func TestGitHubPRApprovedIsBoundToItsCommit(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	n, issue := f.addPR(t, shaA)
	f.srv.AddReview(n, githubtest.Review{Author: "maria", State: "APPROVED"})
	f.srv.SetReviewDecision(n, "APPROVED")

	o := runHook(t, f.env, issue, "pr_approved", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, shaA, o.Outputs["approved_sha"])

	f.srv.SetHead(n, shaB)
	o = runHook(t, f.env, issue, "pr_approved", nil)
	require.Equal(t, hooks.KindFail, o.Kind)
	assert.Contains(t, o.Reason, "was approved at "+shaA[:12])
	assert.Contains(t, o.Reason, "the new commits need a review")
}

// A head whose last CI verdict was a failure never merges for want of a
// ci_passed_sha (a stage skipped by hand): nothing passed it since.
func TestGitHubMergeRefusesAHeadThatFailedCI(t *testing.T) {
	f := newGitHubFixture(t, github.RetryPolicy{})
	_, issue := f.addPR(t, shaA)
	issue.Outputs["failed_checks"] = "test"
	o := runHook(t, f.env, issue, "merge_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind, o.Reason)
	assert.Contains(t, o.Reason, "failed CI (test)")
}
