//go:build unix

package local_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/proc"
)

// The CI command fails unless the commit has a file named ok, and prints
// the commit it runs on. It fails otherwise (exit 9) if the runner's mark
// reached it.
const ciCommand = `test -z "$AGENTTREE_CI_RUNNER" || exit 9; echo "testing $AGENTTREE_CI_SHA at $(git rev-parse HEAD)"; test -f ok || { echo "missing ok file" >&2; exit 3; }`

// ciWait bounds every wait for a CI runner: a runner that never finishes
// fails the test instead of hanging it.
const ciWait = 30 * time.Second

// waitCI polls Checks, as hooks do, until sha's check is done.
func waitCI(t *testing.T, f *local.Forge, sha string) forge.Check {
	t.Helper()
	var checks []forge.Check
	var err error
	require.Eventually(t, func() bool {
		checks, err = f.Checks(context.Background(), sha)
		return err != nil || len(checks) != 1 || checks[0].State.Done()
	}, ciWait, 10*time.Millisecond, "CI of %s did not finish", sha)
	require.NoError(t, err)
	require.Len(t, checks, 1)
	return checks[0]
}

// readPID reads the pid a CI command wrote to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	return pid
}

type ciRec struct {
	Attempt  int    `yaml:"attempt"`
	State    string `yaml:"state"`
	PID      int    `yaml:"pid"`
	Worktree string `yaml:"worktree"`
	Restarts int    `yaml:"restarts"`
	Note     string `yaml:"note"`
}

func (e *env) ciRecord(t *testing.T, sha string) ciRec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.state, "host", "forge", "checks", sha+".yaml"))
	require.NoError(t, err)
	var rec ciRec
	require.NoError(t, yaml.Unmarshal(data, &rec))
	return rec
}

// gonePID is the pid of a process that has exited.
func gonePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func TestChecksBoundToSHA(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{CICommand: ciCommand})
	bad := e.feature(t)
	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	assert.Nil(t, pr.Checks, "CI has not started yet")

	c := waitCI(t, f, bad)
	assert.Equal(t, "ci", c.Name)
	assert.Equal(t, bad, c.SHA)
	assert.Equal(t, forge.CheckFailure, c.State)
	assert.Equal(t, "local", c.Kind)
	assert.EqualValues(t, 1, c.ID)
	assert.False(t, c.StartedAt.IsZero())
	assert.False(t, c.CompletedAt.Before(c.StartedAt))
	log, err := f.Log(ctx, c, 50)
	require.NoError(t, err)
	assert.Contains(t, log, "testing "+bad+" at "+bad)
	assert.Contains(t, log, "missing ok file")
	assert.Contains(t, log, "exit status 3")
	last, err := f.Log(ctx, c, 1)
	require.NoError(t, err)
	assert.NotContains(t, last, "\n")
	assert.Contains(t, last, "CI failed")

	prs, err := f.PRs(ctx, []int{1})
	require.NoError(t, err)
	require.Len(t, prs[1].Checks, 1)
	assert.Equal(t, forge.CheckFailure, prs[1].Checks[0].State)

	// The fix is pushed: the new head has no result, and the old failure
	// does not show for it.
	good := gittest.Commit(t, e.work, "ok", "", "fix")
	gittest.Run(t, e.work, "push", "-q", "origin", "feature")
	prs, err = f.PRs(ctx, []int{1})
	require.NoError(t, err)
	assert.Equal(t, good, prs[1].HeadSHA)
	assert.Nil(t, prs[1].Checks, "PRs never starts CI")

	checks, err := f.Checks(ctx, good[:10])
	require.NoError(t, err)
	require.Len(t, checks, 1)
	assert.Equal(t, good, checks[0].SHA)
	c = waitCI(t, f, good)
	assert.Equal(t, forge.CheckSuccess, c.State)
	pr, err = f.PR(ctx, 1)
	require.NoError(t, err)
	require.Len(t, pr.Checks, 1)
	assert.Equal(t, forge.CheckSuccess, pr.Checks[0].State)

	// The old commit keeps its own result; a rerun forgets it and the next
	// Checks runs CI again.
	checks, err = f.Checks(ctx, bad)
	require.NoError(t, err)
	assert.Equal(t, forge.CheckFailure, checks[0].State)
	require.NoError(t, f.Rerun(ctx, checks))
	log, err = f.Log(ctx, checks[0], 10)
	require.NoError(t, err)
	assert.Empty(t, log)
	c = waitCI(t, f, bad)
	assert.Equal(t, forge.CheckFailure, c.State)
	assert.EqualValues(t, 2, c.ID, "the rerun is a new attempt")
	assert.True(t, c.CompletedAt.After(checks[0].CompletedAt), "a rerun's result is newer than the one it replaced")

	_, err = f.Checks(ctx, strings.Repeat("0", 40))
	assert.ErrorIs(t, err, forge.ErrNotFound)
	e.noWorkTrees(t)
}

// CI runs in the background: Checks answers pending at once, and the
// result is there for whoever asks next, also from another process.
func TestChecksDoNotWaitForCI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{CICommand: "echo working; sleep 1; true"})
	sha := e.feature(t)

	checks, err := f.Checks(ctx, sha)
	require.NoError(t, err)
	require.Len(t, checks, 1)
	assert.Equal(t, forge.CheckPending, checks[0].State)
	assert.False(t, checks[0].StartedAt.IsZero())
	assert.True(t, checks[0].CompletedAt.IsZero())
	pid := e.ciRecord(t, sha).PID
	assert.NotZero(t, pid)

	// As if the command that started CI has exited: a new forge, as the
	// next agenttree command would open, sees the run through.
	g := e.forge(t, local.Options{CICommand: "echo working; sleep 1; true"})
	c := waitCI(t, g, sha)
	assert.Equal(t, forge.CheckSuccess, c.State)
	assert.EqualValues(t, 1, c.ID, "the run was not started twice")
	assert.True(t, c.CompletedAt.After(c.StartedAt))
	assert.GreaterOrEqual(t, c.CompletedAt.Sub(c.StartedAt), time.Second)
	log, err := g.Log(ctx, c, 0)
	require.NoError(t, err)
	assert.Contains(t, log, "working")
	assert.Contains(t, log, "CI passed in")
	rec := e.ciRecord(t, sha)
	assert.Zero(t, rec.PID)
	assert.Empty(t, rec.Worktree)
	e.noWorkTrees(t)
	leftovers, _ := filepath.Glob(filepath.Join(e.state, "host", "forge", "checks", sha+".*.result*"))
	assert.Empty(t, leftovers)
}

func TestChecksConcurrentCallersStartOneRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	runs := filepath.Join(e.root, "runs")
	f := e.forge(t, local.Options{CICommand: "echo run >> '" + runs + "'"})
	sha := e.feature(t)

	atOnce(8, func(int) {
		checks, err := f.Checks(ctx, sha)
		if assert.NoError(t, err) && assert.Len(t, checks, 1) {
			assert.EqualValues(t, 1, checks[0].ID)
		}
	})
	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckSuccess, c.State)
	data, err := os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, "run\n", string(data))
}

// At the time limit the CI command's whole process group gets TERM; one
// that does not stop within the grace gets KILL. Either way the run is
// timed out, and nothing it started is left running. The foreground sleep
// outlasts ciWait: a shell whose sleep got no TERM (its trap waits for
// it), or that got no KILL, fails the test.
func TestChecksTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string // run with bg set to a file for the background pid
		grace   time.Duration
		log     string
	}{
		{"the group stops on TERM", `sleep 120 & echo $! > "$bg"; echo started; sleep 120`, 0, "started"},
		{"last words within the grace", `trap 'echo cleaning up; exit 7' TERM; sleep 120 & echo $! > "$bg"; echo started; sleep 120`, 0, "cleaning up"},
		{"KILL for what ignores TERM", `trap '' TERM; sleep 120 & echo $! > "$bg"; echo started; sleep 120`, 200 * time.Millisecond, "started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			limit := 200 * time.Millisecond
			bg := filepath.Join(e.root, "bg.pid")
			f := e.forge(t, local.Options{CICommand: "bg='" + bg + "'; " + tt.command, CITimeout: limit, CIGrace: tt.grace})
			sha := e.feature(t)
			c := waitCI(t, f, sha)
			assert.Equal(t, forge.CheckTimedOut, c.State)
			assert.False(t, c.CompletedAt.IsZero())
			log, err := f.Log(context.Background(), c, 0)
			require.NoError(t, err)
			assert.Contains(t, log, tt.log)
			assert.Contains(t, log, "timed out after "+limit.String())
			e.noWorkTrees(t)
			pid := readPID(t, bg)
			require.Eventually(t, func() bool { return !proc.Alive(pid) }, ciWait, 10*time.Millisecond,
				"what CI started in the background is stopped too")
		})
	}
}

// A CI command that ends leaves nothing running: its work tree is gone.
func TestChecksLeaveNothingRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bg := filepath.Join(e.root, "bg.pid")
	f := e.forge(t, local.Options{CICommand: "sleep 120 & echo $! > '" + bg + "'; echo done"})
	sha := e.feature(t)
	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckSuccess, c.State)
	pid := readPID(t, bg)
	require.Eventually(t, func() bool { return !proc.Alive(pid) }, ciWait, 10*time.Millisecond)
}

func TestChecksCancelledCallRecordsNothing(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "true"})
	sha := e.feature(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.Checks(ctx, sha)
	require.ErrorIs(t, err, context.Canceled)
	pr, _, err := f.EnsurePR(context.Background(), forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	assert.Nil(t, pr.Checks, "no verdict, not even pending")
	assert.Equal(t, forge.CheckSuccess, waitCI(t, f, sha).State)
	e.noWorkTrees(t)
}

// A runner killed halfway (a reboot, a killed session) is noticed: CI is
// started once more, and if that runner dies too, the run is a failure
// that says why.
func TestChecksRunnerKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	release := filepath.Join(e.root, "release")
	// The killed runners' CI commands are orphans; let them end with the test.
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })
	f := e.forge(t, local.Options{CICommand: "while [ ! -f '" + release + "' ]; do sleep 0.02; done"})
	sha := e.feature(t)

	kill := func(attempt int) {
		checks, err := f.Checks(ctx, sha)
		require.NoError(t, err)
		require.Equal(t, forge.CheckPending, checks[0].State)
		require.EqualValues(t, attempt, checks[0].ID)
		rec := e.ciRecord(t, sha)
		require.NotZero(t, rec.PID)
		require.DirExists(t, rec.Worktree)
		runner, err := os.FindProcess(rec.PID)
		require.NoError(t, err)
		require.NoError(t, runner.Kill())
		require.Eventually(t, func() bool {
			checks, err = f.Checks(ctx, sha)
			return err != nil || checks[0].ID != int64(attempt) || checks[0].State.Done()
		}, ciWait, 10*time.Millisecond, "the runner is noticed gone")
		require.NoError(t, err)
		assert.NoDirExists(t, rec.Worktree, "the dead runner's checkout is removed")
	}

	kill(1)
	log, err := f.Log(ctx, forge.Check{SHA: sha, ID: 2}, 0)
	require.NoError(t, err)
	assert.Contains(t, log, "the CI runner of attempt 1")
	assert.Contains(t, log, "stopped without a result: its process is gone; running CI again")

	kill(2)
	checks, err := f.Checks(ctx, sha)
	require.NoError(t, err)
	c := checks[0]
	assert.Equal(t, forge.CheckFailure, c.State)
	assert.EqualValues(t, 2, c.ID)
	assert.False(t, c.CompletedAt.IsZero())
	log, err = f.Log(ctx, c, 1)
	require.NoError(t, err)
	assert.Contains(t, log, "stopped without a result")
	assert.Contains(t, log, "not the CI command's verdict")
	assert.Contains(t, e.ciRecord(t, sha).Note, "stopped without a result")
	e.noWorkTrees(t)

	// A rerun starts afresh, with a new restart budget.
	require.NoError(t, os.WriteFile(release, nil, 0o644))
	require.NoError(t, f.Rerun(ctx, checks))
	c = waitCI(t, f, sha)
	assert.Equal(t, forge.CheckSuccess, c.State)
	assert.EqualValues(t, 3, c.ID)
}

func TestChecksRestartWhenRunnerNeverStarted(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "true"})
	sha := e.feature(t)
	// What a crash between recording the run and starting it leaves; and
	// a record from before runners were detached.
	for i, rec := range []string{
		"sha: " + sha + "\nattempt: 1\nstate: pending\ncommand: \"true\"\nstarted_at: " + time.Now().UTC().Format(time.RFC3339) + "\n",
		"sha: " + sha + "\nattempt: 3\nstate: pending\ncommand: \"true\"\npid: " + itoa(gonePID(t)) + "\nstarted_at: " + time.Now().UTC().Format(time.RFC3339) + "\n",
	} {
		writeRecord(t, filepath.Join(e.state, "host", "forge", "checks", sha+".yaml"), rec)
		c := waitCI(t, f, sha)
		assert.Equal(t, forge.CheckSuccess, c.State)
		assert.EqualValues(t, 2+2*i, c.ID)
	}
}

// A record left with no runner (pid 0: the process that started the run
// was killed before it recorded the runner's pid) says nothing of the
// runner: it is no runner that stopped without a result, and does not
// spend the budget of restarts. Found by cmd/agenttree TestCrashStorm:
// a controller killed twice while starting CI on a head had CI fail "for
// its environment" and the agent stepped back for nothing.
func TestChecksRunWhoseStartWasCutShortSpendsNoRestart(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "true"})
	sha := e.feature(t)
	host, _ := os.Hostname()
	// The budget is spent (a runner vanished before), and the restart's
	// own start was cut short.
	writeRecord(t, filepath.Join(e.state, "host", "forge", "checks", sha+".yaml"),
		"sha: "+sha+"\nattempt: 2\nstate: pending\ncommand: \"true\"\nhost: "+host+"\nrestarts: 1\nstarted_at: "+time.Now().UTC().Format(time.RFC3339)+"\n")
	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckSuccess, c.State, "run again, not recorded failed")
	assert.EqualValues(t, 3, c.ID)
	assert.Equal(t, 1, e.ciRecord(t, sha).Restarts, "no restart spent")
}

// The controller reads a due PR's checks with the PR (PRs, for a tick's
// batch: controller/prbatch), not through Checks: a run whose runner never
// started (a controller killed between recording the run and starting it)
// or is gone without a result is started again from there as well, not
// shown pending until ci_polling's time limit. Found by cmd/agenttree
// TestCrashStorm: the issue waited for CI that was never going to run.
func TestPRViewRestartsARunWhoseRunnerIsGone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		pid  func(t *testing.T) string
	}{
		{name: "never started", pid: func(*testing.T) string { return "" }},
		{name: "gone without a result", pid: func(t *testing.T) string { return "pid: " + itoa(gonePID(t)) + "\n" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, f := newForge(t, local.Options{CICommand: "true"})
			pr := e.openPR(t, f)
			host, _ := os.Hostname()
			writeRecord(t, filepath.Join(e.state, "host", "forge", "checks", pr.HeadSHA+".yaml"),
				"sha: "+pr.HeadSHA+"\nattempt: 1\nstate: pending\ncommand: \"true\"\n"+tt.pid(t)+"host: "+host+
					"\nstarted_at: "+time.Now().UTC().Format(time.RFC3339)+"\n")
			var c forge.Check
			require.EventuallyWithT(t, func(col *assert.CollectT) {
				prs, err := f.PRs(ctx, []int{pr.Number})
				require.NoError(col, err)
				require.Len(col, prs[pr.Number].Checks, 1)
				c = prs[pr.Number].Checks[0]
				require.Truef(col, c.State.Done(), "the PR's check stays %s", c.State)
			}, ciWait, 10*time.Millisecond)
			assert.Equal(t, forge.CheckSuccess, c.State)
			assert.EqualValues(t, 2, c.ID, "run again as attempt 2")
		})
	}
}

// A run far past its time limit is lost even if its pid lives on (the pid
// was reused, or the runner hangs).
func TestChecksRunPastItsLimitIsLost(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "true", CITimeout: time.Minute})
	sha := e.feature(t)
	host, _ := os.Hostname()
	rec := "sha: " + sha + "\nattempt: 4\nstate: pending\ncommand: \"true\"\npid: " + itoa(os.Getpid()) +
		"\nhost: " + host + "\nrestarts: 1\nstarted_at: " + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + "\n"
	writeRecord(t, filepath.Join(e.state, "host", "forge", "checks", sha+".yaml"), rec)
	checks, err := f.Checks(context.Background(), sha)
	require.NoError(t, err)
	assert.Equal(t, forge.CheckFailure, checks[0].State)
	assert.EqualValues(t, 4, checks[0].ID)
	log, err := f.Log(context.Background(), checks[0], 0)
	require.NoError(t, err)
	assert.Contains(t, log, "stopped without a result: no result 1h0m")
	assert.Contains(t, log, "after it started (CI time limit 1m0s)")
}

// A rerun while a run is going starts a new attempt; the old runner
// finishes, and its result does not replace the newer one.
func TestRerunWhileRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	runs, release := filepath.Join(e.root, "runs"), filepath.Join(e.root, "release")
	// The first run waits and fails; any later one passes at once.
	cmd := "echo run >> '" + runs + "'; if [ $(wc -l < '" + runs + "') -eq 1 ]; then " +
		"while [ ! -f '" + release + "' ]; do sleep 0.02; done; exit 1; fi"
	f := e.forge(t, local.Options{CICommand: cmd})
	sha := e.feature(t)
	checks, err := f.Checks(ctx, sha)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(runs)
		return len(data) > 0
	}, ciWait, 10*time.Millisecond, "the first run started")
	require.NoError(t, f.Rerun(ctx, checks))
	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckSuccess, c.State)
	assert.EqualValues(t, 2, c.ID)

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(e.state, "host", "forge", "checks", sha+".1.result"))
		return err == nil
	}, ciWait, 10*time.Millisecond, "the first runner finished")
	checks, err = f.Checks(ctx, sha)
	require.NoError(t, err)
	assert.Equal(t, forge.CheckSuccess, checks[0].State)
	assert.EqualValues(t, 2, checks[0].ID)
	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	require.Len(t, pr.Checks, 1)
	assert.Equal(t, forge.CheckSuccess, pr.Checks[0].State)
	e.noWorkTrees(t)
}

func TestNoCIMeansOneSkippedCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	sha := e.feature(t)
	checks, err := f.Checks(ctx, sha[:8])
	require.NoError(t, err)
	require.Len(t, checks, 1)
	c := checks[0]
	assert.Equal(t, forge.Check{Name: "ci", SHA: sha, State: forge.CheckSkipped, Kind: "local", URL: "no ci.command configured"}, c)
	assert.True(t, c.State.Passing())
	assert.Equal(t, forge.Summary{Total: 1, Passing: 1}, forge.Summarize(checks))
	log, err := f.Log(ctx, c, 10)
	require.NoError(t, err)
	assert.Contains(t, log, "no ci.command configured")
	require.NoError(t, f.Rerun(ctx, checks), "nothing to rerun")

	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	assert.Equal(t, []forge.Check{c}, pr.Checks)
	prs, err := f.PRs(ctx, []int{pr.Number})
	require.NoError(t, err)
	assert.Equal(t, []forge.Check{c}, prs[pr.Number].Checks)
	_, err = os.Stat(filepath.Join(e.state, "host", "forge", "checks", sha+".yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing ran, nothing recorded")
}

func itoa(n int) string { return strconv.Itoa(n) }
