package wake_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/wake"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/gittest"
)

// within bounds the waits for the watch: it takes milliseconds; the bound
// is for a loaded machine.
const within = 30 * time.Second

// localForge is a local forge over a fresh bare origin, and the directory
// its CI runners publish their results in.
func localForge(t *testing.T) (*local.Forge, string) {
	t.Helper()
	_, work := gittest.NewRemote(t)
	state := filepath.Join(t.TempDir(), "_agenttree")
	f, err := local.New(context.Background(), local.Options{StateDir: state, RepoDir: work})
	require.NoError(t, err)
	return f, filepath.Join(state, "host", "forge", "checks")
}

// publish is what a CI runner does at the end of attempt 1 of sha: its
// result renamed into place. It fails while the directory is not there
// (a watch starting again makes it).
func publish(checks, sha string) error {
	tmp := filepath.Join(checks, sha+".1.result.tmp")
	if err := os.WriteFile(tmp, []byte("1 0\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(checks, sha+".1.result"))
}

// lockedBuffer is a log written from the watch's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A CI result published wakes the commit's issue and cuts the wait short;
// a watch that fails (its directory removed) is logged, unhealthy until it
// is started again, and then tells of results as before.
func TestAWatchThatFailsIsStartedAgain(t *testing.T) {
	f, checks := localForge(t)
	var log lockedBuffer
	w := &wake.Watch{Log: slog.New(slog.NewTextHandler(&log, nil)), Settle: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.Follow(ctx, f)
	defer w.Stop()
	require.Eventually(t, w.Healthy, within, 10*time.Millisecond, "a running watch is healthy")

	sha := strings.Repeat("ab", 20)
	iss := &issues.Issue{PRNumber: 3, HeadSHA: sha}
	woke := make(chan bool, 1)
	go func() { woke <- w.Wait(ctx, time.Hour) }()
	// The watch may not be set up the moment it is healthy: publish until
	// it tells (a result already there is told when it starts).
	require.Eventually(t, func() bool {
		if publish(checks, sha) != nil {
			return false
		}
		select {
		case ok := <-woke:
			return ok
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}, within, 10*time.Millisecond, "a result cuts an hour's wait short")
	assert.True(t, w.Take().Names(iss, nil), "the change names the issue's head")
	assert.False(t, w.Take().Names(iss, nil), "taken once")

	require.NoError(t, os.RemoveAll(checks))
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "watching the forge for changes failed") },
		within, 10*time.Millisecond, "a failed watch is logged")
	require.Eventually(t, w.Healthy, within, 10*time.Millisecond, "started again, the watch is healthy: %s", log.String())
	other := strings.Repeat("cd", 20)
	require.Eventually(t, func() bool {
		if publish(checks, other) != nil {
			return false
		}
		return w.Take().Names(&issues.Issue{}, &issues.Poll{Head: other})
	}, within, 50*time.Millisecond, "started again, the watch tells of results; the poll's head names the issue too")
}

// While the watch is healthy a PR's next poll is at least HealthyPoll
// away; the interval without it is kept, and is due again as soon as the
// watch is not healthy.
func TestTheWatchStretchesThePollWhileHealthy(t *testing.T) {
	var idle wake.Watch
	before := time.Now()
	assert.Equal(t, before.Add(30*time.Second), idle.Stretch(before, 30*time.Second), "no watch: the poll's own interval")

	f, _ := localForge(t)
	var w wake.Watch
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.Follow(ctx, f)
	require.Eventually(t, w.Healthy, within, 10*time.Millisecond)
	now := time.Now()
	next := w.Stretch(now, 30*time.Second)
	assert.Equal(t, now.Add(wake.HealthyPoll), next, "healthy: stretched")
	assert.Equal(t, now.Add(wake.HealthyPoll+time.Minute), w.Stretch(now, wake.HealthyPoll+time.Minute), "a longer interval stays")
	assert.Equal(t, next, w.Due(now, 30*time.Second, next), "healthy: due when stretched to")

	w.Stop()
	assert.False(t, w.Healthy(), "stopped, the watch is not healthy")
	assert.Equal(t, now.Add(30*time.Second), w.Due(now, 30*time.Second, next), "unhealthy: due at the interval without the watch")
	unstretched := now.Add(30*time.Second + 500*time.Millisecond) // IntervalS is whole seconds
	assert.Equal(t, unstretched, w.Due(now, 30*time.Second, unstretched), "a poll that was not stretched keeps its time")
}

// A watch that broke off after a PR's poll may have missed a change in
// between: started again and healthy, it no longer holds the stretch of
// that poll, only of the polls after it.
func TestAWatchStartedAgainDoesNotHoldAStretchFromBefore(t *testing.T) {
	f, _ := localForge(t)
	var w wake.Watch
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.Follow(ctx, f)
	require.Eventually(t, w.Healthy, within, 10*time.Millisecond)
	polled := time.Now()
	next := w.Stretch(polled, 30*time.Second)
	require.Equal(t, polled.Add(wake.HealthyPoll), next)

	w.Stop()
	w.Follow(ctx, f)
	require.Eventually(t, w.Healthy, within, 10*time.Millisecond)
	assert.Equal(t, polled.Add(30*time.Second), w.Due(polled, 30*time.Second, next), "the poll before the break is due at its own interval")
	after := time.Now()
	assert.Equal(t, after.Add(wake.HealthyPoll), w.Due(after, 30*time.Second, w.Stretch(after, 30*time.Second)), "a poll since is stretched")
}
