package pr

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/hooks"
)

// CI that failed for its environment (a runner lost, a download refused,
// a full disk) said nothing of the code: on GitHub it is run again once,
// and if it fails so again the failure is ci_environment, with no feedback
// file and no ci_failed.
func TestGitHubWaitForCIEnvironmentIsNoCodeFailure(t *testing.T) {
	tests := []struct {
		name       string
		conclusion string
		log        string
		why        string
	}{
		{name: "startup failure", conclusion: "startup_failure", why: "its workflow could not start (startup_failure)"},
		{name: "runner shut down", conclusion: "failure",
			log: "2025-03-01T12:00:01.0000000Z go test ./...\n2025-03-01T12:00:02.0000000Z ##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.\n",
			why: "its runner was shut down"},
		{name: "runner lost", conclusion: "failure",
			log: "The self-hosted runner: ci-3 lost communication with the server. Verify the machine is running and has a healthy network connection.\n",
			why: "its runner lost contact with the CI service"},
		{name: "out of disk", conclusion: "failure",
			log: "go: writing go.sum: write /home/runner/go.sum: no space left on device\n", why: "its machine ran out of disk"},
		{name: "DNS", conclusion: "failure",
			log: "fatal: unable to access 'https://github.com/octo/dep/': Could not resolve host: github.com\n", why: "a host name could not be resolved"},
		{name: "go module download refused", conclusion: "failure",
			log: "go: github.com/octo/dep@v1.2.0: reading https://proxy.golang.org/github.com/octo/dep/@v/v1.2.0.zip: 403 Forbidden\n",
			why: "a download was refused"},
		{name: "npm registry unavailable", conclusion: "failure",
			log: "npm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/left-pad\n", why: "a download was refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGitHubFixture(t, ghapi.RetryPolicy{})
			_, issue := f.addPR(t, shaA)
			first := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: tt.conclusion})
			f.srv.SetJobLog(f.checkRun(t, shaA, first).JobID, tt.log)

			o := runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindPending, o.Kind, "run again once: %s", o.Reason)
			assert.Len(t, f.srv.Reruns(), 1)

			rerun := f.latestRun(t, shaA, "test")
			f.srv.SetJobLog(rerun.JobID, tt.log)
			f.srv.CompleteCheckRun(rerun.ID, tt.conclusion)
			o = runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, hooks.ClassCIEnvironment, o.Class, o.Reason)
			assert.Contains(t, o.Reason, "CI on "+shaA[:12]+" failed for its environment, not the code (ci_environment), after it was run again: test: "+tt.why)
			assert.Contains(t, o.Reason, "nothing in the code to fix")
			assert.Empty(t, o.Files, "nothing failed in the code: no feedback")
			assert.Empty(t, o.Outputs["failed_checks"])
			assert.Len(t, f.srv.Reruns(), 1, "once")
		})
	}
}

// What a failing test writes is a code failure, even where it names a
// status or a download: a failure is ci_failed unless every failed check
// failed for its environment (or was cancelled).
func TestGitHubWaitForCITestFailuresStayCodeFailures(t *testing.T) {
	tests := []struct {
		name string
		runs map[string]string // check name → log; every check failed
	}{
		{name: "a test that checks a 403", runs: map[string]string{
			"test": "--- FAIL: TestDownloadForbidden (0.01s)\n    client_test.go:40: GET https://127.0.0.1:4311/file: want 200, got 403\nFAIL\n"}},
		{name: "a test named after the network", runs: map[string]string{
			"test": "--- FAIL: TestCouldNotResolveHostIsReported (0.00s)\nFAIL\n"}},
		{name: "an environment failure beside a real one", runs: map[string]string{
			"test": "--- FAIL: TestLogin (0.01s)\nFAIL\n", "lint": "write /tmp/x: no space left on device\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGitHubFixture(t, ghapi.RetryPolicy{})
			_, issue := f.addPR(t, shaA)
			for name, log := range tt.runs {
				id := f.srv.AddCheckRun(shaA, githubtest.CheckRun{Name: name, Status: "completed", Conclusion: "failure"})
				f.srv.SetJobLog(f.checkRun(t, shaA, id).JobID, log)
			}
			o := runHook(t, f.env, issue, "wait_for_ci", nil)
			require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, hooks.ClassCIFailed, o.Class)
			assert.Empty(t, f.srv.Reruns(), "a code failure is not run again")
			assert.NotEmpty(t, o.Files["ci_feedback.md"])
		})
	}
}

// On the local forge, a CI command killed by a signal the runner did not
// send, one that cannot be started, or one whose log says the disk is full
// failed for its environment: it is run again once, then ci_environment.
func TestLocalWaitForCIEnvironmentIsNoCodeFailure(t *testing.T) {
	tests := []struct {
		name string
		ci   string
		why  string
	}{
		{name: "killed by a signal not ours", ci: "echo testing; kill -KILL $$",
			why: "the CI command was killed by a signal agenttree did not send"},
		{name: "out of disk", ci: "echo 'cp: error writing build/app: No space left on device'; exit 1",
			why: "its machine ran out of disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocalPR(t, tt.ci)
			l.openPR(t)

			o := pollUntilDone(t, l, "wait_for_ci")
			require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, hooks.ClassCIEnvironment, o.Class, o.Reason)
			assert.Contains(t, o.Reason, "failed for its environment, not the code (ci_environment), after it was run again: ci: "+tt.why)
			assert.Empty(t, o.Files, "nothing failed in the code: no feedback")
			assert.Equal(t, "1", l.issue.Watch[watchReruns], "run again once")
			checks, err := l.forge.Checks(t.Context(), l.issue.HeadSHA)
			require.NoError(t, err)
			require.Len(t, checks, 1)
			assert.Equal(t, 2, int(checks[0].ID), "the second attempt")
		})
	}
	t.Run("a failing command is a code failure", func(t *testing.T) {
		l := newLocalPR(t, "echo '--- FAIL: TestDiskFull'; exit 1")
		l.openPR(t)
		o := pollUntilDone(t, l, "wait_for_ci")
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassCIFailed, o.Class)
		assert.Empty(t, l.issue.Watch[watchReruns], "not run again")
	})
}

// A CI command the local runner could not start failed for its
// environment: the check says so (forge.Check.Environment), and
// wait_for_ci runs it again once, then reports ci_environment.
func TestLocalCIThatCannotStartIsTheEnvironments(t *testing.T) {
	l := newLocalPR(t, "true")
	f, err := local.New(t.Context(), local.Options{StateDir: filepath.Join(filepath.Dir(l.bare), "state"), RepoDir: l.work,
		CICommand: "true", CIUser: "agenttree-no-such-user", DefaultBranch: "main"})
	require.NoError(t, err)
	l.forge, l.env.Forge = f, f
	l.openPR(t)

	o := pollUntilDone(t, l, "wait_for_ci")
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassCIEnvironment, o.Class, o.Reason)
	assert.Contains(t, o.Reason, "ci: the CI command could not be started (see the log)")
	checks, err := f.Checks(t.Context(), l.issue.HeadSHA)
	require.NoError(t, err)
	require.Len(t, checks, 1)
	assert.Equal(t, forge.CheckFailure, checks[0].State)
	assert.Equal(t, "the CI command could not be started (see the log)", checks[0].Environment)
	log, err := f.Log(t.Context(), checks[0], 20)
	require.NoError(t, err)
	assert.Contains(t, log, "agenttree: cannot run CI in ")
	assert.Contains(t, log, "sandbox: user:agenttree-no-such-user")
}
