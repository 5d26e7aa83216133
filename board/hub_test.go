package board_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/board"
	"github.com/agenttree/agenttree/sessions/records"
	"github.com/agenttree/agenttree/stages"
)

// countTmux puts a tmux on PATH that counts its runs and fails (as with
// no server), and returns the count so far.
func countTmux(t *testing.T) func() int {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for tmux")
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	script := "#!/bin/sh\necho \"$*\" >> '" + runs + "'\necho 'no server running on /nowhere' >&2\nexit 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmux"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() int {
		data, _ := os.ReadFile(runs)
		return strings.Count(string(data), "\n")
	}
}

// The board asks tmux which agents' sessions run, and reads their
// records, only while a page's event stream is open: `controller --http`
// serves for days with no page open, and a look four times a second is a
// tmux process each (docs/ARCHITECTURE.md §11).
func TestTheBoardLooksOnlyWhileAStreamIsOpen(t *testing.T) {
	r := newRig(t)
	iss := r.create(t, "Add login page", "implement.code")
	require.NoError(t, records.Open(r.e.Store.Layout()).Put(&records.Session{Issue: iss.ID, Role: stages.RoleDeveloper,
		Agent: "claude", Session: "agent-1", Pane: "%1"}))
	runs := countTmux(t)
	base := r.serve(t) // looking every 20 ms
	time.Sleep(2 * time.Second)
	assert.Zero(t, runs(), "tmux runs with no stream open")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?token="+r.srv.Token(), nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool { return runs() > 3 }, 20*time.Second, 20*time.Millisecond,
		"the board looks at the agents' sessions while a stream is open")

	cancel()
	require.Eventually(t, func() bool {
		before := runs()
		time.Sleep(300 * time.Millisecond)
		return runs() == before
	}, 20*time.Second, time.Millisecond, "the looks stop once the stream is closed")
	before := runs()
	time.Sleep(time.Second)
	assert.Equal(t, before, runs(), "no looks with the stream closed")
}

// collected counts a stream's events and keeps the last.
type collected struct {
	mu   sync.Mutex
	n    int
	last string
}

func collect(events <-chan event) *collected {
	c := &collected{}
	go func() {
		for ev := range events {
			c.mu.Lock()
			c.n, c.last = c.n+1, ev.data
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *collected) get() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, c.last
}

// An agent that appends to its CI log without pause has each page of its
// issue read and sent at most once a second, the first change at once and
// the last shown; the board's page and another issue's, which do not show
// that log, are not read for it at all (docs/ARCHITECTURE.md §11).
func TestACILogWrittenWithoutPauseIsReadOnceASecond(t *testing.T) {
	r := newRig(t)
	iss := r.create(t, "Add login page", "implement.feedback")
	r.create(t, "Another", "implement.feedback")
	var mu sync.Mutex
	reads := map[string]int{}
	board.OnRead(r.srv, func(path string) { mu.Lock(); reads[path]++; mu.Unlock() })
	readsOf := func(path string) int { mu.Lock(); defer mu.Unlock(); return reads[path] }
	base := r.serve(t) // looking every 20 ms
	ours := []*collected{collect(r.events(t, base, "/issues/1/events", "")), collect(r.events(t, base, "/issues/1/events", ""))}
	collect(r.events(t, base, "/issues/2/events", ""))
	collect(r.events(t, base, "/events", ""))
	for _, c := range ours {
		require.Eventually(t, func() bool { n, _ := c.get(); return n >= 1 }, 20*time.Second, 10*time.Millisecond, "the page as it opens")
	}
	time.Sleep(time.Second) // past the second after the hub's first look

	require.NoError(t, os.MkdirAll(r.e.Store.Dir(iss.ID), 0o755))
	f, err := os.OpenFile(filepath.Join(r.e.Store.Dir(iss.ID), "ci_feedback.md"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	written := 0
	for start := time.Now(); time.Since(start) < 3*time.Second; time.Sleep(2 * time.Millisecond) {
		written++
		_, err := fmt.Fprintf(f, "FAIL TestLogin run %d\n", written)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	last := fmt.Sprintf("run %d</pre>", written)
	for i, c := range ours {
		require.Eventually(t, func() bool { _, data := c.get(); return strings.Contains(data, last) }, 20*time.Second, 10*time.Millisecond,
			"stream %d shows the last line written", i)
		// 3 s of writes: a first event at once, one a second after, and
		// one for what the last second wrote; and the page as it opened.
		n, _ := c.get()
		t.Logf("stream %d: %d events over %d writes", i, n, written)
		assert.LessOrEqual(t, n, 6, "stream %d's events over %d writes", i, written)
	}
	t.Logf("reads: issue 1's streams %d, issue 2's %d, the board's %d", readsOf("/issues/1/events"), readsOf("/issues/2/events"), readsOf("/events"))
	assert.LessOrEqual(t, readsOf("/issues/1/events"), 2*7, "the issue's two streams' reads")
	// Each read as it opened, and once at the hub's first look.
	assert.LessOrEqual(t, readsOf("/issues/2/events"), 2, "another issue's page is not read for this CI log")
	assert.LessOrEqual(t, readsOf("/events"), 2, "the board's page is not read for a CI log")
}
