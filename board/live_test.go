package board_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/internal/statedir"
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

// next is the first event of events whose data holds want, within 20 s.
func next(t *testing.T, events <-chan event, want string) event {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if strings.Contains(ev.data, want) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event with %q within 20 s", want)
		}
	}
}

// rateLimited writes the controller's record of the forge's rate limit,
// holding for an hour.
func rateLimited(t *testing.T, r *rig) {
	t.Helper()
	path := filepath.Join(statedir.Layout{Root: r.e.Store.Root()}.Host(), "ratelimit.json")
	data, err := json.Marshal(controller.RateLimit{Until: time.Now().Add(time.Hour), Resource: "graphql"})
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
	first := next(t, r.events(t, base, "/events", ""), "Add login page")
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
	assert.Equal(t, "2", next(t, events, "Second issue").id)

	issueEv := next(t, r.events(t, base, "/issues/1/events", "1"), `data-stage="plan.draft"`)
	assert.Equal(t, "1", issueEv.id, "an issue's events are numbered by its version")
	assert.Equal(t, "issue", issueEv.kind)
}
