package github

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/github/githubtest"
)

func TestTransientErrorsAreRetriedWithoutAFalseFailure(t *testing.T) {
	faults := []struct {
		name  string
		fault githubtest.Fault
		// rate limits wait what GitHub says; 5xx back off.
		wantWait time.Duration
	}{
		{"500", githubtest.Fault500, 0},
		{"502", githubtest.Fault502, 0},
		{"secondary rate limit", githubtest.FaultSecondary, time.Second},
		{"429", githubtest.Fault429, time.Second},
	}
	for _, f := range faults {
		t.Run(f.name+"/REST", func(t *testing.T) {
			srv := githubtest.New(t)
			c, sl := newClient(t, srv)
			id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
			srv.CompleteCheckRun(id, "success")
			srv.FailNext(2, f.fault.On(githubtest.EndpointCheckRuns))

			checks, err := c.Checks(context.Background(), sha1)
			require.NoError(t, err)
			require.Len(t, checks, 1)
			assert.Equal(t, forge.CheckSuccess, checks[0].State)
			assert.Equal(t, 3, srv.Requests(githubtest.EndpointCheckRuns))
			assert.Equal(t, 2, srv.FaultsSent())
			assert.EqualValues(t, 2, c.Stats().Retries)
			if f.wantWait > 0 {
				assert.Equal(t, f.wantWait, sl.all()[0], "Retry-After honoured")
			}
		})
		t.Run(f.name+"/GraphQL", func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv)
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
			id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
			srv.CompleteCheckRun(id, "success")
			srv.FailNext(3, f.fault)

			prs, err := c.PRs(context.Background(), []int{n})
			require.NoError(t, err)
			require.Len(t, prs[n].Checks, 1)
			assert.Equal(t, forge.CheckSuccess, prs[n].Checks[0].State)
			assert.Equal(t, 4, srv.Requests(githubtest.EndpointGraphQL))
		})
	}
}

func TestRandomFaultsNeverLookLikeCI(t *testing.T) {
	srv := githubtest.New(t, githubtest.WithSeed(7))
	c, _ := newClient(t, srv, func(o *Options) { o.Retry.MaxAttempts = 2 })
	id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	srv.CompleteCheckRun(id, "success")
	srv.FailRate(0.5, githubtest.Fault502)
	ok, failed := 0, 0
	for range 40 {
		checks, err := c.Checks(context.Background(), sha1)
		if err != nil {
			failed++
			assert.ErrorIs(t, err, ErrServer)
			assert.Nil(t, checks)
			continue
		}
		ok++
		require.Len(t, checks, 1)
		assert.Equal(t, forge.CheckSuccess, checks[0].State)
	}
	assert.Positive(t, ok)
	assert.Positive(t, failed)
}

func TestGivingUp(t *testing.T) {
	ctx := context.Background()

	t.Run("server errors", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		srv.FailNext(100, githubtest.Fault502)
		checks, err := c.Checks(ctx, sha1)
		require.ErrorIs(t, err, ErrServer)
		assert.NotErrorIs(t, err, forge.ErrRateLimit)
		assert.Nil(t, checks)
		assert.Equal(t, 4, srv.Requests(githubtest.EndpointCheckRuns), "MaxAttempts")
		assert.Len(t, sl.all(), 3)

		_, err = c.PRs(ctx, []int{1})
		require.ErrorIs(t, err, ErrServer)
	})

	t.Run("secondary rate limit", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		srv.FailNext(100, githubtest.FaultSecondary)
		_, err := c.Checks(ctx, sha1)
		require.ErrorIs(t, err, forge.ErrRateLimit)
		var rl *forge.RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.True(t, rl.Secondary)
		assert.NotErrorIs(t, err, ErrServer)
	})

	t.Run("secondary limit without Retry-After waits a minute: longer than MaxWait", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		f := githubtest.FaultSecondary
		f.RetryAfter = 0
		srv.FailNext(1, f)
		_, err := c.Checks(ctx, sha1)
		var rl *forge.RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.True(t, rl.Secondary)
		assert.GreaterOrEqual(t, rl.RetryAfter, time.Minute)
		assert.Equal(t, 1, srv.TotalRequests())
		assert.Zero(t, sl.count())

		// Held back client-side until the minute is over.
		_, err = c.PRs(ctx, []int{1})
		require.ErrorIs(t, err, forge.ErrRateLimit)
		assert.Equal(t, 1, srv.TotalRequests())
	})

	t.Run("primary limit exhausted", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		reset := time.Now().Add(40 * time.Minute).Truncate(time.Second)
		srv.SetRateLimit("core", 5000, 0, reset)
		_, err := c.Checks(ctx, sha1)
		require.ErrorIs(t, err, forge.ErrRateLimit)
		var rl *forge.RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.False(t, rl.Secondary)
		assert.WithinDuration(t, reset, rl.Reset, 2*time.Second)
		assert.Equal(t, 1, srv.TotalRequests())

		// The client knows: it does not ask again before the reset...
		_, err = c.Checks(ctx, sha1)
		require.ErrorIs(t, err, forge.ErrRateLimit)
		assert.Equal(t, 1, srv.TotalRequests())
		// ...but another resource has its own limit.
		_, err = c.PRs(ctx, []int{1})
		require.NoError(t, err)
		assert.Equal(t, 2, srv.TotalRequests())
	})

	t.Run("primary limit exhausted, reset within MaxWait: waits and goes on", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
		srv.SetRateLimit("core", 5000, 0, time.Now().Add(5*time.Second))
		// The wait is where the reset happens.
		sl.hook = func(int) { srv.SetRateLimit("core", 5000, 5000, time.Now().Add(time.Hour)) }
		checks, err := c.Checks(ctx, sha1)
		require.NoError(t, err)
		assert.Len(t, checks, 1)
		require.Len(t, sl.all(), 1)
		assert.InDelta(t, 6*time.Second, sl.all()[0], float64(1500*time.Millisecond), "until the reset, plus a second")
	})

	t.Run("GraphQL primary limit", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		srv.SetRateLimit("graphql", 5000, 0, time.Now().Add(time.Hour))
		_, err := c.PRs(ctx, []int{1})
		require.ErrorIs(t, err, forge.ErrRateLimit)
		assert.NotErrorIs(t, err, forge.ErrNotFound)
	})

	t.Run("a create is not retried after a 5xx", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{})
		srv.FailNext(1, githubtest.Fault502)
		err := c.Comment(ctx, n, "hello")
		require.ErrorIs(t, err, ErrServer)
		assert.Equal(t, 1, srv.Requests(githubtest.EndpointCreateComment))
		pr, _ := srv.PR(n)
		assert.Empty(t, pr.Comments)
	})

	t.Run("context cancelled while backing off", func(t *testing.T) {
		srv := githubtest.New(t)
		ctx, cancel := context.WithCancel(ctx)
		c, sl := newClient(t, srv)
		sl.hook = func(int) { cancel() }
		srv.FailNext(100, githubtest.Fault500)
		_, err := c.Checks(ctx, sha1)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, srv.TotalRequests())
	})
}

func TestConditionalRequestsServedFromCache(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	srv.AddStatus(sha1, "ci/external", "pending", "")

	first, err := c.Checks(ctx, sha1)
	require.NoError(t, err)
	used := coreUsed(t, c)

	for range 3 {
		again, err := c.Checks(ctx, sha1)
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
	assert.Equal(t, 4, srv.Requests(githubtest.EndpointCheckRuns))
	assert.Equal(t, 4, srv.Requests(githubtest.EndpointStatus))
	assert.Equal(t, 3, srv.NotModified(githubtest.EndpointCheckRuns))
	assert.Equal(t, 3, srv.NotModified(githubtest.EndpointStatus))
	assert.EqualValues(t, 6, c.Stats().CacheHits)
	assert.Equal(t, used, coreUsed(t, c), "304s cost no rate limit")

	// A change is a 200 with the new state, not a stale cache hit.
	srv.CompleteCheckRun(id, "failure")
	changed, err := c.Checks(ctx, sha1)
	require.NoError(t, err)
	assert.Equal(t, 3, srv.NotModified(githubtest.EndpointCheckRuns))
	assert.Equal(t, 4, srv.NotModified(githubtest.EndpointStatus))
	assert.Equal(t, 1, forge.Summarize(changed).Failing)
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
		_, err := c.Checks(context.Background(), sha)
		require.NoError(t, err)
	}
	assert.Equal(t, 3, c.cache.len())
	// sha1's two entries were evicted first: no 304 for them.
	_, err := c.Checks(context.Background(), sha1)
	require.NoError(t, err)
	assert.Zero(t, srv.NotModified())
}

func TestAuthErrors(t *testing.T) {
	ctx := context.Background()

	t.Run("no token", func(t *testing.T) {
		_, err := New(ctx, Options{Repo: "octo/app"})
		require.ErrorIs(t, err, forge.ErrAuth)
		assert.Contains(t, err.Error(), "no GitHub token for github.com")
		assert.Contains(t, err.Error(), "gh auth login")
		assert.Contains(t, err.Error(), "GH_TOKEN")
	})

	t.Run("no token for an Enterprise host", func(t *testing.T) {
		_, err := New(ctx, Options{Repo: "ghe.example.com/octo/app", Host: "ghe.example.com"})
		require.ErrorIs(t, err, forge.ErrAuth)
		assert.Contains(t, err.Error(), "GH_ENTERPRISE_TOKEN")
	})

	t.Run("token from the environment", func(t *testing.T) {
		srv := githubtest.New(t)
		t.Setenv("GH_TOKEN", srv.Token)
		c, err := New(ctx, Options{Repo: "octo/app", BaseURL: srv.URL})
		require.NoError(t, err)
		_, err = c.Checks(ctx, sha1)
		require.NoError(t, err)
	})

	t.Run("rejected token", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv, func(o *Options) { o.Token = "wrong" })
		_, err := c.Checks(ctx, sha1)
		require.ErrorIs(t, err, forge.ErrAuth)
		assert.Contains(t, err.Error(), "gh auth login")
		_, err = c.PRs(ctx, []int{1})
		require.ErrorIs(t, err, forge.ErrAuth)
		assert.Equal(t, 2, srv.TotalRequests(), "a 401 is not retried")
	})
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d, ok := parseRetryAfter("7", now)
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
	d, ok = parseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Equal(t, 90*time.Second, d)
	_, ok = parseRetryAfter("", now)
	assert.False(t, ok)
}
