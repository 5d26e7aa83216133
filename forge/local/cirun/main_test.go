//go:build unix

package cirun_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/local/cirun"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
)

// TestMain keeps the developer's git configuration out of the tests and
// gives the git they run an identity.
func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// ciWait bounds every wait for CI: a run that never ends fails the test
// instead of hanging it.
const ciWait = 30 * time.Second

// newAttempt checks main of a new bare repository out the way the forge
// does (a src directory in an agenttree-ci-* directory), with the log and
// the result beside it.
func newAttempt(t *testing.T, command string) cirun.Attempt {
	t.Helper()
	bare, _ := gittest.NewRemote(t)
	root := filepath.Dir(bare)
	tmp, err := os.MkdirTemp(root, "agenttree-ci-")
	require.NoError(t, err)
	wt := filepath.Join(tmp, "src")
	gittest.Run(t, bare, "worktree", "add", "--detach", wt, "main")
	return cirun.Attempt{
		Bare: bare, Worktree: wt, Command: command,
		LogFile: filepath.Join(root, "ci.log"), ResultFile: filepath.Join(root, "ci.result"),
		Timeout: 10 * time.Minute, Grace: 10 * time.Second,
	}
}

// noWorkTrees checks that the attempt's work tree is gone, and forgotten.
func noWorkTrees(t *testing.T, a cirun.Attempt) {
	t.Helper()
	assert.NoDirExists(t, filepath.Dir(a.Worktree))
	list, err := (&gitx.Repo{Dir: a.Bare}).Worktrees(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1, "work trees: %v", list)
	assert.True(t, list[0].Bare)
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

func TestMainRefusesBadArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "want one CI command"},
		{"no command", []string{"--bare", "b", "--worktree", "w", "--log", "l", "--result", "r", "--timeout", "1s"}, "want one CI command"},
		{"no work tree", []string{"--bare", "b", "--log", "l", "--result", "r", "--timeout", "1s", "--", "true"}, "--worktree is required"},
		{"no time limit", []string{"--bare", "b", "--worktree", "w", "--log", "l", "--result", "r", "--", "true"}, "--timeout must be above zero"},
		{"unknown flag", []string{"--shell", "bash", "--", "true"}, "flag provided but not defined: -shell"},
		{"a variable without its value", []string{"--set", "CI", "--", "true"}, `invalid value "CI" for flag -set: want NAME=value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			assert.Equal(t, 2, cirun.Main(context.Background(), tt.args, &stderr))
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

// A run that ends, one way or another, publishes its result, with its
// output in the log, and leaves neither its work tree nor anything it
// started behind. The command runs in the attempt's checkout, without
// the runner's mark in its environment. Not parallel: it sets the
// environment.
func TestMainPublishesResult(t *testing.T) {
	tests := []struct {
		name    string
		command string // run with bg set to a file for a background pid
		timeout time.Duration
		want    cirun.Result
		wantLog string
	}{
		{"passes", `sleep 120 & echo $! > "$bg"; cat a.txt`, 0, cirun.Result{Exit: 0}, "one\ntwo\nthree\n"},
		{"fails", `sleep 120 & echo $! > "$bg"; echo broken >&2; exit 3`, 0, cirun.Result{Exit: 3}, "broken\n"},
		{"the mark does not reach CI", `sleep 120 & echo $! > "$bg"; test -z "$AGENTTREE_CI_RUNNER"`, 0, cirun.Result{Exit: 0}, ""},
		{"times out", `sleep 120 & echo $! > "$bg"; echo started; sleep 120`, 200 * time.Millisecond,
			cirun.Result{Exit: 128 + int(syscall.SIGTERM), TimedOut: true}, "started\n"},
		// The out-of-memory killer, say: the environment's failure.
		{"killed by a signal the runner did not send", `sleep 120 & echo $! > "$bg"; echo started; kill -KILL $$`, 0,
			cirun.Result{Exit: 128 + int(syscall.SIGKILL), Environment: cirun.EnvSignal},
			"started\nagenttree: CI was killed by signal 9 (killed), which the CI runner did not send\n"},
		// A person stopping the run: no verdict, and not the environment.
		{"cancelled by a signal the runner did not send", `sleep 120 & echo $! > "$bg"; echo started; kill -TERM $$`, 0,
			cirun.Result{Exit: 128 + int(syscall.SIGTERM), Cancelled: true},
			"started\nagenttree: CI was cancelled: stopped by signal 15 (terminated), which the CI runner did not send\n"},
		// A crash of the program itself is the code's failure.
		{"crashed", `sleep 120 & echo $! > "$bg"; kill -SEGV $$`, 0, cirun.Result{Exit: 128 + int(syscall.SIGSEGV)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AGENTTREE_CI_RUNNER", "1")
			a := newAttempt(t, "")
			bg := filepath.Join(filepath.Dir(a.Bare), "bg.pid")
			a.Command = "bg='" + bg + "'; " + tt.command
			if tt.timeout > 0 {
				a.Timeout = tt.timeout
			}
			var stderr bytes.Buffer
			require.Equal(t, 0, cirun.Main(context.Background(), a.Args(), &stderr), stderr.String())

			res, ok := cirun.ReadResult(a.ResultFile)
			require.True(t, ok, "the result is published")
			assert.False(t, res.At.IsZero())
			res.At = time.Time{}
			assert.Equal(t, tt.want, res)
			_, ok = cirun.ReadUnpublished(a.ResultFile)
			assert.False(t, ok, "nothing is left unpublished")
			log, err := os.ReadFile(a.LogFile)
			require.NoError(t, err)
			assert.Equal(t, tt.wantLog, string(log))
			noWorkTrees(t, a)
			pid := readPID(t, bg)
			require.Eventually(t, func() bool { return !proc.Alive(pid) }, ciWait, 10*time.Millisecond,
				"what CI started in the background is stopped")
		})
	}
}

// A runner told to stop (its context ends) stops CI and publishes no
// result, so that the forge runs CI again; its work tree is removed all
// the same.
func TestMainStoppedPublishesNothing(t *testing.T) {
	t.Parallel()
	a := newAttempt(t, "")
	bg := filepath.Join(filepath.Dir(a.Bare), "bg.pid")
	a.Command = "sleep 120 & echo $! > '" + bg + "'; echo started; wait"

	ctx, stop := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- cirun.Main(ctx, a.Args(), os.Stderr) }()
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(a.LogFile)
		return bytes.Contains(data, []byte("started"))
	}, ciWait, 10*time.Millisecond)
	stop()

	select {
	case c := <-code:
		assert.Equal(t, 1, c)
	case <-time.After(ciWait):
		require.FailNow(t, "the runner did not stop")
	}
	assert.NoFileExists(t, a.ResultFile)
	_, ok := cirun.ReadUnpublished(a.ResultFile)
	assert.False(t, ok)
	noWorkTrees(t, a)
	pid := readPID(t, bg)
	require.Eventually(t, func() bool { return !proc.Alive(pid) }, ciWait, 10*time.Millisecond)
}

// The command gets the variables the attempt names and its own values,
// which travel on the runner's command line, and nothing else of the
// runner's environment: the controller's credentials stay out. Not
// parallel: it sets the environment.
func TestMainPassesTheAttemptsEnvironmentOnly(t *testing.T) {
	t.Setenv("GH_TOKEN", "gh-secret")
	t.Setenv("CI", "the controller's")
	t.Setenv("CIRUN_LISTED", "listed")
	a := newAttempt(t, `echo "${GH_TOKEN-unset} $CIRUN_LISTED $CI $AGENTTREE_CI_SHA"`)
	a.Env = []string{"CIRUN_LISTED"}
	a.Vars = []string{"CI=true", "AGENTTREE_CI_SHA=abc123"}
	var stderr bytes.Buffer
	require.Equal(t, 0, cirun.Main(context.Background(), a.Args(), &stderr), stderr.String())
	log, err := os.ReadFile(a.LogFile)
	require.NoError(t, err)
	assert.Equal(t, "unset listed true abc123\n", string(log))
}
