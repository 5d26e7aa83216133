package local_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
)

// changes collects what a watch reports.
type changes struct {
	mu  sync.Mutex
	got []forge.Change
}

func (c *changes) add(ch forge.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, ch)
}

// told fails ct unless the watch told of want.
func (c *changes) told(ct *assert.CollectT, want forge.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Containsf(ct, c.got, want, "the watch told of %+v only", c.got)
}

// watch runs f's Watch until the test ends, and fails the test if it
// returns an error before.
func watch(t *testing.T, f *local.Forge) *changes {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var c changes
	done := make(chan error, 1)
	go func() { done <- f.Watch(ctx, c.add) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "a watch stopped by its context returns nil")
	})
	return &c
}

// A CI run that finishes, red or green, is told at once with its commit;
// a PR record written is told with its number.
func TestWatchTellsOfCIFinishedAndPRWritten(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "false"})
	sha := e.feature(t)
	c := watch(t, f)
	// The watch is set up before Watch's scan; give it the moment to get
	// there, so what follows is told by an event and not found by the scan.
	time.Sleep(100 * time.Millisecond)

	_, err := f.Checks(context.Background(), sha)
	require.NoError(t, err)
	require.EventuallyWithT(t, func(ct *assert.CollectT) { c.told(ct, forge.Change{SHA: sha, What: local.ChangeCIFinished}) },
		ciWait, 10*time.Millisecond, "the CI run's end is told")

	pr := e.openPR(t, f)
	require.EventuallyWithT(t, func(ct *assert.CollectT) { c.told(ct, forge.Change{PR: pr.Number, What: local.ChangePR}) },
		ciWait, 10*time.Millisecond, "the PR's record is told")
}

// A result published before the watch started is told when it starts:
// nothing written between a watch's failure and its restart is lost.
func TestWatchTellsOfResultsPublishedBeforeItStarted(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "false"})
	sha := e.feature(t)
	_, err := f.Checks(context.Background(), sha)
	require.NoError(t, err)
	result := filepath.Join(e.state, "host", "forge", "checks", sha+".1.result")
	require.Eventually(t, func() bool { _, err := os.Stat(result); return err == nil }, ciWait, 10*time.Millisecond,
		"the runner publishes %s", result)

	c := watch(t, f)
	require.EventuallyWithT(t, func(ct *assert.CollectT) { c.told(ct, forge.Change{SHA: sha, What: local.ChangeCIFinished}) },
		ciWait, 10*time.Millisecond, "the result already there is told")
}

// A watch whose directory is removed says so, for its caller to start it
// again; started again, it makes the directory afresh.
func TestWatchEndsWhenItsDirectoryGoes(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "false"})
	checks := filepath.Join(e.state, "host", "forge", "checks")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Watch(ctx, func(forge.Change) {}) }()
	var ended error
	require.Eventually(t, func() bool {
		// Removed before the watch was set up, the directory is made again
		// by it; removed here until the watch sees it go.
		_ = os.RemoveAll(checks)
		select {
		case ended = <-done:
			return true
		default:
			return false
		}
	}, ciWait, 50*time.Millisecond, "the watch ends when its directory goes")
	require.Error(t, ended)
	assert.Contains(t, ended.Error(), checks)

	go func() { done <- f.Watch(ctx, func(forge.Change) {}) }()
	require.Eventually(t, func() bool { _, err := os.Stat(checks); return err == nil }, ciWait, 10*time.Millisecond)
	cancel()
	assert.NoError(t, <-done)
}

// A push to an open PR's branch is told with the PR's number, a branch
// named with a slash too (its ref is in a directory the push makes); a
// push to a branch without an open PR is not a change of any PR.
func TestWatchTellsOfPushesToOpenPRs(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{})
	c := watch(t, f)
	time.Sleep(100 * time.Millisecond)

	e.branch(t, "team/login", map[string]string{"l.txt": "l\n"})
	pr, _, err := f.EnsurePR(context.Background(), forge.NewPR{Branch: "team/login"})
	require.NoError(t, err)
	e.branch(t, "team/login", map[string]string{"l.txt": "l\n", "m.txt": "m\n"})
	require.EventuallyWithT(t, func(ct *assert.CollectT) { c.told(ct, forge.Change{PR: pr.Number, What: local.ChangePush}) },
		ciWait, 10*time.Millisecond, "the push to the PR's branch is told")

	e.pushMain(t, "n.txt", "n\n")
	time.Sleep(200 * time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.got {
		if ch.What == local.ChangePush {
			assert.Equal(t, pr.Number, ch.PR, "a push is told for the PR of its branch only: %+v", c.got)
		}
	}
}
