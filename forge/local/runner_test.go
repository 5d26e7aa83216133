//go:build unix

package local_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/proc"
)

func TestRunCIRefusesBadArguments(t *testing.T) {
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			assert.Equal(t, 2, local.RunCI(context.Background(), tt.args, &stderr))
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

// A runner told to stop (its context ends) stops CI and publishes no
// result, so that the forge runs CI again; its work tree is removed all
// the same.
func TestRunCIStoppedPublishesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tmp, err := os.MkdirTemp(e.root, "agenttree-ci-")
	require.NoError(t, err)
	wt := filepath.Join(tmp, "src")
	gittest.Run(t, e.bare, "worktree", "add", "--detach", wt, "main")
	log, result, bg := filepath.Join(e.root, "ci.log"), filepath.Join(e.root, "ci.result"), filepath.Join(e.root, "bg.pid")
	args := []string{"--bare", e.bare, "--worktree", wt, "--log", log, "--result", result, "--timeout", "10m", "--grace", "10s",
		"--", "sleep 120 & echo $! > '" + bg + "'; echo started; wait"}

	ctx, stop := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- local.RunCI(ctx, args, os.Stderr) }()
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(log)
		return bytes.Contains(data, []byte("started"))
	}, ciWait, 10*time.Millisecond)
	stop()

	select {
	case c := <-code:
		assert.Equal(t, 1, c)
	case <-time.After(ciWait):
		require.FailNow(t, "the runner did not stop")
	}
	assert.NoFileExists(t, result)
	assert.NoFileExists(t, result+".tmp")
	assert.NoDirExists(t, tmp)
	e.noWorkTrees(t)
	pid := readPID(t, bg)
	require.Eventually(t, func() bool { return !proc.Alive(pid) }, ciWait, 10*time.Millisecond)
}

// A runner program that ends without running CI is a lost runner: CI is
// started once more, then recorded as failed.
func TestChecksRunnerThatDoesNotRun(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "true", Runner: []string{"true"}})
	sha := e.feature(t)
	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckFailure, c.State)
	assert.EqualValues(t, 2, c.ID)
	log, err := f.Log(context.Background(), c, 0)
	require.NoError(t, err)
	assert.Contains(t, log, "the CI runner of attempt 1")
	assert.Contains(t, log, "stopped without a result: its process is gone; running CI again")
	assert.Contains(t, log, "not the CI command's verdict")
	e.noWorkTrees(t)
}

// A runner that cannot start leaves no verdict and no work tree. Not
// parallel: it sets the environment.
func TestChecksRunnerCannotStart(t *testing.T) {
	tests := []struct {
		name   string
		runner []string
		mark   bool
		want   string
	}{
		{"no such program", []string{filepath.Join(t.TempDir(), "missing")}, false, "no such file"},
		// This process started as a runner but ran on as something else
		// (a test binary without localtest.RunnerMain): it must not start
		// runners of its own.
		{"started as a runner", nil, true, "did not act as one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newForge(t, local.Options{CICommand: "true", Runner: tt.runner})
			sha := e.feature(t)
			if tt.mark {
				t.Setenv("AGENTTREE_CI_RUNNER", "1")
			}
			_, err := f.Checks(context.Background(), sha)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "local CI of "+sha[:12]+": start")
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, e.ciRecord(t, sha).State, "no verdict: the next call starts afresh")
			e.noWorkTrees(t)
		})
	}
}
