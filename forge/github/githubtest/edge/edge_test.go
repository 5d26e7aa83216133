package edge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is an edge in front of a stub endpoint that answers its body
// and counts how often it ran.
type fixture struct {
	e    *Edge
	ts   *httptest.Server
	url  string
	ran  atomic.Int32
	body atomic.Value // string
}

const (
	getThing  = "GET /thing"
	postThing = "POST /thing"
	graphql   = "POST /graphql"
	blob      = "GET /blob"
)

func newFixture(t *testing.T, opts ...Option) *fixture {
	f := &fixture{e: New("secret", opts...)}
	f.body.Store("v1")
	stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.ran.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, f.body.Load().(string))
	})
	mux := http.NewServeMux()
	// A GraphQL request's kind is its ?op= here; the fake server reads it
	// from the query.
	opOf := func(r *http.Request) string { return r.URL.Query().Get("op") }
	for _, rt := range []Route{{Endpoint: getThing}, {Endpoint: postThing}, {Endpoint: graphql, Resource: GraphQL, Kind: opOf}, {Endpoint: blob, Public: true}} {
		mux.Handle(rt.Endpoint, f.e.Wrap(rt, stub))
	}
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	f.url, f.ts = ts.URL, ts
	return f
}

// do sends endpoint's request with the right token, unless the header
// pairs set Authorization otherwise, and returns the answer and its body.
func (f *fixture) do(t *testing.T, endpoint string, header ...string) (*http.Response, string) {
	t.Helper()
	resp, err := f.send(endpoint, header...)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func (f *fixture) send(endpoint string, header ...string) (*http.Response, error) {
	method, path, _ := strings.Cut(endpoint, " ")
	req, err := http.NewRequest(method, f.url+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "token secret")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return http.DefaultClient.Do(req)
}

func errorMessage(t *testing.T, body string) string {
	t.Helper()
	var doc struct{ Message string }
	require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
	return doc.Message
}

func TestAuthorization(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		auth     string
		want     int
	}{
		{"token", getThing, "token secret", http.StatusOK},
		{"bearer", getThing, "Bearer secret", http.StatusOK},
		{"lower-case bearer", getThing, "bearer secret", http.StatusOK},
		{"no header", getThing, "", http.StatusUnauthorized},
		{"wrong token", getThing, "token nope", http.StatusUnauthorized},
		{"basic", getThing, "Basic c2VjcmV0", http.StatusUnauthorized},
		{"public route without token", blob, "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			resp, body := f.do(t, tt.endpoint, "Authorization", tt.auth)
			require.Equal(t, tt.want, resp.StatusCode)
			assert.Equal(t, 1, f.e.Requests(tt.endpoint), "counted either way")
			if tt.want == http.StatusUnauthorized {
				assert.Equal(t, "Bad credentials", errorMessage(t, body))
				assert.Zero(t, f.ran.Load(), "the endpoint is not reached")
			}
		})
	}
}

func TestPublicRoutesHaveNoRateLimitOrETag(t *testing.T) {
	f := newFixture(t)
	resp, _ := f.do(t, blob)
	assert.Empty(t, resp.Header.Get("X-RateLimit-Remaining"))
	assert.Empty(t, resp.Header.Get("ETag"))
}

func TestRateLimit(t *testing.T) {
	t.Run("each answer is charged", func(t *testing.T) {
		f := newFixture(t)
		for i := 1; i <= 2; i++ {
			resp, _ := f.do(t, getThing)
			assert.Equal(t, "5000", resp.Header.Get("X-RateLimit-Limit"))
			assert.Equal(t, strconv.Itoa(5000-i), resp.Header.Get("X-RateLimit-Remaining"))
			assert.Equal(t, strconv.Itoa(i), resp.Header.Get("X-RateLimit-Used"))
			assert.Equal(t, "core", resp.Header.Get("X-RateLimit-Resource"))
		}
		resp, _ := f.do(t, graphql)
		assert.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"), "GraphQL has a limit of its own")
		assert.Equal(t, "graphql", resp.Header.Get("X-RateLimit-Resource"))
	})

	reset := time.Now().Add(30 * time.Minute).Truncate(time.Second)
	t.Run("exhausted REST limit is a 403 until the reset", func(t *testing.T) {
		f := newFixture(t)
		f.e.SetRateLimit(Core, 60, 0, reset)
		resp, body := f.do(t, getThing)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, errorMessage(t, body), "API rate limit exceeded")
		assert.Equal(t, "0", resp.Header.Get("X-RateLimit-Remaining"))
		assert.Equal(t, strconv.FormatInt(reset.Unix(), 10), resp.Header.Get("X-RateLimit-Reset"))
		assert.Zero(t, f.ran.Load())
	})

	t.Run("exhausted GraphQL limit is a 200 with an error", func(t *testing.T) {
		f := newFixture(t)
		f.e.SetRateLimit(GraphQL, 60, 0, reset)
		resp, body := f.do(t, graphql)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var doc struct{ Errors []struct{ Type string } }
		require.NoError(t, json.Unmarshal([]byte(body), &doc))
		require.Len(t, doc.Errors, 1)
		assert.Equal(t, "RATE_LIMITED", doc.Errors[0].Type)
		resp, _ = f.do(t, getThing)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "core is untouched")
	})

	t.Run("a passed reset opens a window of the same size", func(t *testing.T) {
		f := newFixture(t)
		f.e.SetRateLimit(Core, 60, 0, time.Now().Add(-time.Second))
		resp, _ := f.do(t, getThing)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "60", resp.Header.Get("X-RateLimit-Limit"))
		assert.Equal(t, "59", resp.Header.Get("X-RateLimit-Remaining"))
	})
}

func TestConditionalRequests(t *testing.T) {
	f := newFixture(t)
	resp, _ := f.do(t, getThing)
	etag := resp.Header.Get("ETag")
	require.Regexp(t, `^W/"[0-9a-f]{32}"$`, etag)
	assert.NotEmpty(t, resp.Header.Get("Cache-Control"))

	for _, inm := range []string{etag, etag[2:], `"other", ` + etag, "*"} {
		resp, body := f.do(t, getThing, "If-None-Match", inm)
		assert.Equal(t, http.StatusNotModified, resp.StatusCode, inm)
		assert.Empty(t, body)
		assert.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"), "a 304 is not charged")
	}
	assert.Equal(t, 4, f.e.NotModified(getThing))
	assert.EqualValues(t, 5, f.ran.Load(), "the endpoint still does its work")

	f.body.Store("v2")
	resp, body := f.do(t, getThing, "If-None-Match", etag)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a changed body")
	assert.Equal(t, "v2", body)
	assert.NotEqual(t, etag, resp.Header.Get("ETag"))

	resp, _ = f.do(t, postThing, "If-None-Match", "*")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("ETag"), "only GETs")
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		fault      Fault
		status     int
		retryAfter string
		body       string
		ran        int32
	}{
		{"500", Fault500, http.StatusInternalServerError, "", "Server Error", 0},
		{"502 from the load balancer", Fault502, http.StatusBadGateway, "", "<h1>502</h1>", 0},
		{"secondary rate limit", FaultSecondary, http.StatusForbidden, "1", "secondary rate limit", 0},
		{"429", Fault429, http.StatusTooManyRequests, "1", "secondary rate limit", 0},
		{"after handling", Fault{Status: http.StatusGatewayTimeout, Message: "timeout", AfterHandling: true},
			http.StatusGatewayTimeout, "", "timeout", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.e.FailNext(1, tt.fault)
			resp, body := f.do(t, getThing)
			require.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.retryAfter, resp.Header.Get("Retry-After"))
			assert.Contains(t, body, tt.body)
			assert.Equal(t, tt.ran, f.ran.Load())
			assert.Equal(t, 1, f.e.FaultsSent())

			resp, _ = f.do(t, getThing)
			assert.Equal(t, http.StatusOK, resp.StatusCode, "one fault only")
			assert.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"), "a fault is not charged")
		})
	}
}

func TestFailNextMatchesItsEndpoint(t *testing.T) {
	f := newFixture(t)
	f.e.FailNext(2, Fault500.On(getThing))
	var got []int
	for _, ep := range []string{postThing, getThing, postThing, getThing, getThing} {
		resp, _ := f.do(t, ep)
		got = append(got, resp.StatusCode)
	}
	assert.Equal(t, []int{200, 500, 200, 500, 200}, got)
	assert.Equal(t, 2, f.e.FaultsSent())
}

func TestHangupIsANetworkError(t *testing.T) {
	f := newFixture(t)
	f.e.FailNext(1, FaultHangup)
	_, err := f.send(getThing)
	require.Error(t, err)
	resp, _ := f.do(t, getThing)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// A held request is answered by nothing until its client gives up, and
// holds no other request up meanwhile.
func TestTimeoutHoldsTheRequestUntilTheClientGivesUp(t *testing.T) {
	f := newFixture(t)
	f.e.FailNext(1, FaultTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/thing", strings.NewReader(`{"query": "..."}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "token secret")
	held := make(chan error, 1)
	began := time.Now()
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		held <- err
	}()
	require.Eventually(t, func() bool { return f.e.FaultsSent() == 1 }, 10*time.Second, time.Millisecond, "the held request came first")
	resp, body := f.do(t, getThing)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "answered while the other is held")
	assert.Equal(t, "v1", body)
	require.ErrorIs(t, <-held, context.DeadlineExceeded, "no answer: the client gave up")
	assert.Less(t, time.Since(began), 30*time.Second, "not held past the client's giving up")
	assert.EqualValues(t, 1, f.ran.Load(), "the held request was not handled")
	assert.Equal(t, map[string]int{"timeout": 1}, f.e.FaultCounts())

	f.e.FailNext(1, Fault{Hold: 10 * time.Millisecond})
	req, err = http.NewRequest(http.MethodGet, f.url+"/thing", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "token secret")
	// A new connection: net/http sends a GET again by itself when a
	// reused one closes.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err = fresh.Do(req)
	require.Error(t, err, "a client that waits out the hold is hung up on")
	assert.Equal(t, map[string]int{"timeout": 1, "hold": 1}, f.e.FaultCounts())

	began = time.Now()
	f.ts.Close() // waits for the requests in hand
	assert.Less(t, time.Since(began), 5*time.Second, "the hold of the POST its client gave up on ended with it")
}

func TestFaultCountsByName(t *testing.T) {
	f := newFixture(t)
	for _, fault := range []Fault{Fault500, Fault502, Fault500, FaultSecondary, Fault429, FaultHangup, {Status: http.StatusGatewayTimeout}} {
		f.e.FailNext(1, fault)
		_, _ = f.send(getThing)
	}
	assert.Equal(t, map[string]int{"500": 2, "502": 1, "secondary rate limit": 1, "429": 1, "hang-up": 1, "504": 1}, f.e.FaultCounts())
	assert.Equal(t, 7, f.e.FaultsSent())
}

func TestFailRateIsSeeded(t *testing.T) {
	statuses := func(opts ...Option) []int {
		f := newFixture(t, opts...)
		f.e.FailRate(0.5, Fault500)
		var out []int
		for range 20 {
			resp, _ := f.do(t, getThing)
			out = append(out, resp.StatusCode)
		}
		f.e.ClearFaults()
		resp, _ := f.do(t, getThing)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "cleared")
		return out
	}
	first := statuses(WithSeed(7))
	assert.Equal(t, first, statuses(WithSeed(7)), "same seed, same faults")
	assert.Contains(t, first, http.StatusOK)
	assert.Contains(t, first, http.StatusInternalServerError)
	assert.NotEqual(t, first, statuses(WithSeed(8)))
}

func TestCounts(t *testing.T) {
	f := newFixture(t)
	resp, _ := f.do(t, getThing)
	f.do(t, getThing, "If-None-Match", resp.Header.Get("ETag"))
	f.do(t, postThing)
	f.do(t, blob)
	assert.Equal(t, 2, f.e.Requests(getThing))
	assert.Equal(t, 4, f.e.TotalRequests())
	assert.Equal(t, 1, f.e.NotModified())
	assert.Equal(t, 1, f.e.NotModified(getThing, postThing))
	f.e.ResetCounts()
	assert.Zero(t, f.e.TotalRequests())
	assert.Zero(t, f.e.NotModified())
}

func TestCountsByKind(t *testing.T) {
	f := newFixture(t)
	for _, op := range []string{"PRStates", "ReviewThreads", "PRStates"} {
		f.do(t, graphql+"?op="+op)
	}
	resp, _ := f.do(t, getThing)
	f.do(t, getThing, "If-None-Match", resp.Header.Get("ETag"))

	assert.Equal(t, []Count{
		{Endpoint: getThing, Requests: 2, NotModified: 1},
		{Endpoint: graphql, Kind: "PRStates", Requests: 2},
		{Endpoint: graphql, Kind: "ReviewThreads", Requests: 1},
	}, f.e.Counts())
	assert.Equal(t, 3, f.e.Requests(graphql), "every kind")
	assert.Equal(t, 2, f.e.RequestsOfKind(graphql, "PRStates"))
	assert.Zero(t, f.e.RequestsOfKind(graphql, "Other"))
	assert.Equal(t, 5, f.e.TotalRequests())
	f.e.ResetCounts()
	assert.Empty(t, f.e.Counts())
}

func TestLatency(t *testing.T) {
	f := newFixture(t, WithLatency(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+"/thing", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "token secret")
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded, "held for the latency")
	assert.Zero(t, f.ran.Load(), "a request given up in flight is not handled")
	assert.Zero(t, f.e.TotalRequests(), "nor counted")

	f.e.SetLatency(time.Millisecond)
	resp, body := f.do(t, getThing)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "v1", body)
	f.e.SetLatency(0)
	resp, _ = f.do(t, getThing)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, f.e.Requests(getThing))
}
