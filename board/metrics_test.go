package board_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/board"
	"github.com/agenttree/agenttree/controller/metrics"
	"github.com/agenttree/agenttree/controller/ratelimit"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/statedir"
)

// The controller's numbers are on the board's listener, behind its login
// token as every route: a scraper sends it in the header.
func TestMetricsAreServedBehindTheLoginToken(t *testing.T) {
	r := newRig(t)
	r.create(t, "Add login page", "implementation_review")
	load := func() (*engine.Engine, error) { return r.e, nil }
	srv, err := board.New(load, person, nil)
	require.NoError(t, err)
	srv.Metrics = metrics.New(load).Handler()
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	get := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, ts.URL+"/metrics", nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("X-Agenttree-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, _ := get("")
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	code, _ = get("0123")
	assert.Equal(t, http.StatusForbidden, code, "another token")
	code, body := get(srv.Token())
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "# TYPE agenttree_issues_waiting gauge")
	assert.Contains(t, body, `agenttree_issues_waiting{on="person"} 1`, "the issue at review waits on a person")

	code, _ = func() (int, string) {
		without, err := board.New(load, person, nil)
		require.NoError(t, err)
		ts := httptest.NewServer(without.Handler())
		defer ts.Close()
		req, err := http.NewRequest(http.MethodGet, ts.URL+"/metrics", nil)
		require.NoError(t, err)
		req.Header.Set("X-Agenttree-Token", without.Token())
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, ""
	}()
	assert.Equal(t, http.StatusNotFound, code, "a board without metrics has no such route")
}

// The board says the forge's rate limit holds while the controller's
// record of it does, as status does, and nothing once it has lifted.
func TestTheBoardSaysRateLimitedUntil(t *testing.T) {
	r := newRig(t)
	path := filepath.Join(statedir.Layout{Root: r.e.Store.Root()}.Host(), "ratelimit.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	write := func(until time.Time) {
		data, err := json.Marshal(ratelimit.Limit{Until: until, Resource: "graphql"})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
	write(until)
	code, body := r.get(t, "/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "rate-limited until "+until.Local().Format(time.TimeOnly)+" (graphql)")

	write(time.Now().Add(-time.Minute))
	_, body = r.get(t, "/")
	assert.NotContains(t, body, "rate-limited until")
}
