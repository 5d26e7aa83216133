package ghapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// The transport stack hands every answer up as a response, as net/http's
// RoundTripper contract asks: a limit or an outage is no transport error.
func TestTransportHandsEveryAnswerUp(t *testing.T) {
	for _, f := range []githubtest.Fault{githubtest.FaultSecondary, githubtest.Fault429, githubtest.Fault502} {
		t.Run(http.StatusText(f.Status), func(t *testing.T) {
			srv := githubtest.New(t)
			c, sl := newClient(t, srv)
			srv.FailNext(1, f)
			req, err := http.NewRequest(http.MethodGet, "https://api.github.com/"+c.path("commits/%s/check-runs", sha1), nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "token "+srv.Token)

			resp, err := c.cache.RoundTrip(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, f.Status, resp.StatusCode)
			assert.Equal(t, 1, srv.TotalRequests(), "sent once")
			assert.Empty(t, sl.Waits(), "no waiting below go-gh")
			assert.EqualValues(t, 1, c.Stats().Requests)
			assert.NotEmpty(t, c.RateLimits(), "the rate-limit headers were recorded on the way")
		})
	}
}

// checksOf reads what a poll of a commit's CI reads: its check runs and
// its statuses.
func checksOf(t *testing.T, c *Client, sha string) ([]CheckRun, *CombinedStatus) {
	t.Helper()
	runs, err := c.CheckRuns(context.Background(), sha)
	require.NoError(t, err)
	statuses, err := c.CombinedStatus(context.Background(), sha)
	require.NoError(t, err)
	return runs, statuses
}

func TestConditionalRequestsServedFromCache(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	srv.AddStatus(sha1, "ci/external", "pending", "")

	firstRuns, firstStatus := checksOf(t, c, sha1)
	used := coreUsed(t, c)

	for range 3 {
		runs, status := checksOf(t, c, sha1)
		assert.Equal(t, firstRuns, runs)
		assert.Equal(t, firstStatus, status)
	}
	assert.Equal(t, 4, srv.Requests(githubtest.EndpointCheckRuns))
	assert.Equal(t, 4, srv.Requests(githubtest.EndpointStatus))
	assert.Equal(t, 3, srv.NotModified(githubtest.EndpointCheckRuns))
	assert.Equal(t, 3, srv.NotModified(githubtest.EndpointStatus))
	assert.EqualValues(t, 6, c.Stats().CacheHits)
	assert.Equal(t, used, coreUsed(t, c), "304s cost no rate limit")

	// A change is a 200 with the new state, not a stale cache hit.
	srv.CompleteCheckRun(id, "failure")
	runs, _ := checksOf(t, c, sha1)
	assert.Equal(t, 3, srv.NotModified(githubtest.EndpointCheckRuns))
	assert.Equal(t, 4, srv.NotModified(githubtest.EndpointStatus))
	require.Len(t, runs, 1)
	assert.Equal(t, "failure", *runs[0].Conclusion)
}

func coreUsed(t *testing.T, c *Client) int {
	for _, l := range c.RateLimits() {
		if l.Resource == "core" {
			return l.Used
		}
	}
	t.Fatal("no core rate limit recorded")
	return 0
}

func TestETagCacheIsBounded(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, func(o *Options) { o.CacheEntries = 3 })
	for _, sha := range []string{sha1, sha2, sha3} {
		checksOf(t, c, sha)
	}
	assert.Equal(t, 3, c.cache.Len())
	// sha1's two entries were evicted first: no 304 for them.
	checksOf(t, c, sha1)
	assert.Zero(t, srv.NotModified())
}

// A request GitHub holds without answering is given up after the answer
// timeout and sent again, as a network error is; without the timeout it
// held the call (and a controller's tick) for as long as GitHub did.
func TestARequestHeldUnansweredIsGivenUpAndRetried(t *testing.T) {
	srv := githubtest.New(t)
	c, sl := newClient(t, srv, func(o *Options) { o.AnswerTimeout = 50 * time.Millisecond })
	srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	srv.FailNext(1, githubtest.FaultTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	began := time.Now()
	runs, err := c.CheckRuns(ctx, sha1)
	require.NoError(t, err, "after %s", time.Since(began))
	assert.Len(t, runs, 1)
	assert.Equal(t, 2, srv.Requests(githubtest.EndpointCheckRuns), "held once, then answered")
	assert.EqualValues(t, 1, c.Stats().Retries)
	assert.Len(t, sl.Waits(), 1, "backed off once, as after a network error")
}

// The answer timeout bounds the wait for an answer to begin, not its
// reading: a long body (a job's log) is read whole.
func TestTheAnswerTimeoutLeavesTheBodyUntimed(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		time.Sleep(150 * time.Millisecond)
		_, _ = io.WriteString(w, "last\n")
	}))
	defer ts.Close()
	rt := answerWait{next: http.DefaultTransport, d: 50 * time.Millisecond}
	req, err := http.NewRequest(http.MethodGet, ts.URL, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, "first\nlast\n", string(body))

	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer held.Close()
	req, err = http.NewRequest(http.MethodGet, held.URL, nil)
	require.NoError(t, err)
	_, err = rt.RoundTrip(req)
	var timeout interface{ Timeout() bool }
	require.ErrorAs(t, err, &timeout)
	assert.True(t, timeout.Timeout())
}
