package board_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/board"
	"github.com/agenttree/agenttree/controller/ratelimit"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/sessions/records"
	"github.com/agenttree/agenttree/sessions/tmux/tmuxtest"
	"github.com/agenttree/agenttree/stages"
)

// events opens the event stream at base+path, sending last as
// Last-Event-ID when set, and passes on its events until the test ends.
func (r *rig) events(t *testing.T, base, path, last string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?token="+r.srv.Token(), nil)
	require.NoError(t, err)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	out := make(chan event, 16)
	go func() {
		defer resp.Body.Close()
		readEvents(resp.Body, out)
	}()
	return out
}

// next is the first event of events whose data holds want, within d.
func next(t *testing.T, events <-chan event, want string, d time.Duration) event {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-events:
			if strings.Contains(ev.data, want) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event with %q within %s", want, d)
		}
	}
}

// rateLimited writes the controller's record of the forge's rate limit,
// holding for an hour.
func rateLimited(t *testing.T, r *rig) {
	t.Helper()
	path := filepath.Join(statedir.Layout{Root: r.e.Store.Root()}.Host(), "ratelimit.json")
	data, err := json.Marshal(ratelimit.Limit{Until: time.Now().Add(time.Hour), Resource: "graphql"})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// A browser that reconnects gets the page's fragment at once, numbered
// with the current id though that is its Last-Event-ID: the id counts the
// issues' writes, and what else the fragment shows (here the forge's rate
// limit) may have changed while it was away. Then each change, numbered
// past it.
func TestAReconnectedStreamGetsTheFragmentAtOnce(t *testing.T) {
	r := newRig(t)
	r.create(t, "Add login page", "plan.draft")
	base := r.serve(t)
	first := next(t, r.events(t, base, "/events", ""), "Add login page", 20*time.Second)
	assert.Equal(t, "1", first.id, "one issue at version 1")
	assert.Equal(t, "board", first.kind)

	rateLimited(t, r)
	events := r.events(t, base, "/events", first.id)
	select {
	case ev := <-events:
		assert.Equal(t, first.id, ev.id, "numbered with the current id")
		assert.Contains(t, ev.data, "rate-limited until", "as the page is now")
	case <-time.After(10 * time.Second):
		t.Fatal("a reconnected stream got nothing until something new")
	}
	r.create(t, "Second issue", "backlog")
	assert.Equal(t, "2", next(t, events, "Second issue", 20*time.Second).id)

	issueEv := next(t, r.events(t, base, "/issues/1/events", "1"), `data-stage="plan.draft"`, 20*time.Second)
	assert.Equal(t, "1", issueEv.id, "an issue's events are numbered by its version")
	assert.Equal(t, "issue", issueEv.kind)
}

// What a page shows beside the issues' writes is pushed when it changes
// though no id moves: the forge's rate limit, the tail of the CI log the
// agent was given, whether the agent's session runs.
func TestWhatTheIdDoesNotCountIsPushed(t *testing.T) {
	tests := []struct {
		name, path string
		// arrange makes the rig, with an issue 1, and returns the change
		// and what the page shows before and after it.
		arrange func(t *testing.T) (r *rig, change func(), before, after string)
	}{
		{name: "the forge's rate limit", path: "/events", arrange: func(t *testing.T) (*rig, func(), string, string) {
			r := newRig(t)
			r.create(t, "Add login page", "implementation_review")
			return r, func() { rateLimited(t, r) }, "Add login page", "rate-limited until"
		}},
		{name: "the CI log's tail", path: "/issues/1/events", arrange: func(t *testing.T) (*rig, func(), string, string) {
			r := newRig(t)
			iss := r.create(t, "Add login page", "implement.feedback")
			return r, func() {
				require.NoError(t, os.MkdirAll(r.e.Store.Dir(iss.ID), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(r.e.Store.Dir(iss.ID), "ci_feedback.md"), []byte("FAIL TestLogin\n"), 0o644))
			}, `data-stage="implement.feedback"`, "FAIL TestLogin"
		}},
		{name: "the agent's session ends", path: "/issues/1/events", arrange: func(t *testing.T) (*rig, func(), string, string) {
			sock := tmuxtest.Server(t)
			r := newRigWith(t, testpipeline.Read(t, "cli")+"tmux:\n  socket: "+sock+"\n")
			iss := r.create(t, "Add login page", "implement.code")
			tmux(t, sock, "new-session", "-d", "-s", "agent-1", "sleep", "600")
			pane := tmux(t, sock, "display-message", "-p", "-t", "agent-1", "#{pane_id}")
			require.NoError(t, records.Open(r.e.Store.Layout()).Put(&records.Session{Issue: iss.ID, Role: stages.RoleDeveloper,
				Agent: "claude", Session: "agent-1", Socket: sock, Pane: pane}))
			return r, func() { tmux(t, sock, "kill-session", "-t", "agent-1") }, "agent-alive", "agent-ended"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, change, before, after := tt.arrange(t)
			events := r.events(t, r.serve(t), tt.path, "")
			first := next(t, events, before, 20*time.Second)
			require.NotContains(t, first.data, after)
			change()
			// Within the keep-alive's 15 s, at which a stream reads its
			// page again whatever the stamp says: the board looks every
			// 20 ms here.
			ev := next(t, events, after, 10*time.Second)
			assert.Equal(t, first.id, ev.id, "no issue was written")
		})
	}
}

// tmux runs a tmux command on the server at sock.
func tmux(t *testing.T, sock string, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
	require.NoError(t, err, "tmux %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// An engine that cannot be opened (a config being edited, say) leaves
// every page as it was: the board's log warns of it, once for each error
// rather than at every look (made while a page's stream is open).
func TestAnEngineThatCannotBeOpenedIsWarnedOfOnce(t *testing.T) {
	var logged lockedBuffer
	var failing atomic.Value
	failing.Store(errors.New("stage plan.draft: no such role"))
	srv, err := board.New(func() (*engine.Engine, error) { return nil, failing.Load().(error) }, person,
		slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	srv.Every = 10 * time.Millisecond
	ln, err := board.Listen("127.0.0.1:0", false)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+"/events?token="+srv.Token(), nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()

	warned := func() int { return strings.Count(logged.String(), "could not open the engine") }
	require.Eventually(t, func() bool { return warned() == 1 }, 20*time.Second, 10*time.Millisecond, "a warning: %s", logged.String())
	assert.Contains(t, logged.String(), "level=WARN")
	assert.Contains(t, logged.String(), "no such role")
	time.Sleep(300 * time.Millisecond) // some thirty looks more
	assert.Equal(t, 1, warned(), "once for the same error")
	failing.Store(errors.New("stages: line 3: mapping values are not allowed"))
	require.Eventually(t, func() bool { return warned() == 2 }, 20*time.Second, 10*time.Millisecond, "another error is warned of")
}

// lockedBuffer is a log's buffer the test reads while the board writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
