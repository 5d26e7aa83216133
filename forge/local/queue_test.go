//go:build unix

package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
)

// With ci.max_parallel: 1, a head pushed while another's CI runs is
// queued: pending, queued, no start time (wait_for_ci's timeout runs from
// the start). It starts at the first look after the other run ends, and
// its log says how long it waited.
func TestChecksQueueBehindMaxParallel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	release := filepath.Join(e.root, "release")
	// Each run waits for the release file, so the first holds the slot
	// until the test lets it go.
	f := e.forge(t, local.Options{CICommand: "while [ ! -f '" + release + "' ]; do sleep 0.02; done", CIMaxParallel: 1})
	first := e.feature(t)
	second := e.branch(t, "second", map[string]string{"second.txt": "2\n"})

	c, err := f.Checks(ctx, first)
	require.NoError(t, err)
	require.Len(t, c, 1)
	assert.Equal(t, forge.CheckPending, c[0].State)
	assert.False(t, c[0].Queued, "the first run takes the free slot")
	assert.False(t, c[0].StartedAt.IsZero())

	for range 3 {
		c, err = f.Checks(ctx, second)
		require.NoError(t, err)
		require.Len(t, c, 1)
		assert.Equal(t, forge.CheckPending, c[0].State)
		assert.True(t, c[0].Queued, "the second waits for the slot")
		assert.True(t, c[0].StartedAt.IsZero(), "a queued run has not started")
		assert.EqualValues(t, 1, c[0].ID, "looking again queues no new attempt")
	}

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	assert.Equal(t, forge.CheckSuccess, waitCI(t, f, first).State)
	got := waitCI(t, f, second)
	assert.Equal(t, forge.CheckSuccess, got.State)
	assert.False(t, got.Queued)
	assert.False(t, got.StartedAt.IsZero())
	log, err := f.Log(ctx, got, 0)
	require.NoError(t, err)
	assert.Contains(t, log, "queued for")
	assert.Contains(t, log, "behind other CI runs (ci.max_parallel: 1)")
}

// A CI command stopped by TERM or INT that the runner did not send (a
// person's kill or Ctrl-C) is a cancelled run: no verdict on the code.
func TestChecksStoppedFromOutsideIsCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	pidFile := filepath.Join(e.root, "ci.pid")
	f := e.forge(t, local.Options{CICommand: "echo $$ > '" + pidFile + "'; echo started; sleep 120"})
	sha := e.feature(t)
	_, err := f.Checks(ctx, sha)
	require.NoError(t, err)
	// The shell makes the file before it writes the pid in it: the pid is
	// there once its line is.
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(data), "\n")
	}, ciWait, 10*time.Millisecond)
	pid := readPID(t, pidFile)
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))

	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckCancelled, c.State)
	assert.Empty(t, c.Environment, "a person's stop is no fault of the environment")
	log, err := f.Log(ctx, c, 0)
	require.NoError(t, err)
	assert.Contains(t, log, "CI was cancelled")
	e.noWorkTrees(t)
}
