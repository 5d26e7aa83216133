package ghapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest"
)

func TestTransientErrorsAreRetried(t *testing.T) {
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

			runs, err := c.CheckRuns(context.Background(), sha1)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			require.NotNil(t, runs[0].Conclusion)
			assert.Equal(t, "success", *runs[0].Conclusion, "the real answer, after the faults")
			assert.Equal(t, 3, srv.Requests(githubtest.EndpointCheckRuns))
			assert.Equal(t, 2, srv.FaultsSent())
			assert.EqualValues(t, 2, c.Stats().Retries)
			if f.wantWait > 0 {
				assert.Equal(t, f.wantWait, sl.Waits()[0], "Retry-After honoured")
				assert.EqualValues(t, 2, c.Stats().RateLimited)
			}
		})
		t.Run(f.name+"/GraphQL", func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv)
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
			id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
			srv.CompleteCheckRun(id, "success")
			srv.FailNext(3, f.fault)

			prs, err := c.PullRequests(context.Background(), []int{n})
			require.NoError(t, err)
			require.Len(t, prs[n].CheckRuns, 1)
			assert.Equal(t, "success", *prs[n].CheckRuns[0].Conclusion)
			assert.Equal(t, 4, srv.Requests(githubtest.EndpointGraphQL))
		})
	}
}

func TestServerErrorsBackOffExponentially(t *testing.T) {
	srv := githubtest.New(t)
	c, sl := newClient(t, srv, func(o *Options) {
		o.Retry = RetryPolicy{MaxAttempts: 5, BaseDelay: time.Second, MaxDelay: 4 * time.Second}
	})
	srv.FailNext(100, githubtest.Fault500)
	_, err := c.CheckRuns(context.Background(), sha1)
	require.ErrorIs(t, err, ErrServer)
	// Each wait is its interval give or take half: 1s, 2s, 4s, then capped.
	waits := sl.Waits()
	require.Len(t, waits, 4)
	for i, interval := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		assert.GreaterOrEqual(t, waits[i], interval/2, "wait %d", i)
		assert.LessOrEqual(t, waits[i], interval*3/2, "wait %d", i)
	}
}

func TestGivingUp(t *testing.T) {
	ctx := context.Background()

	t.Run("server errors", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		srv.FailNext(100, githubtest.Fault502)
		runs, err := c.CheckRuns(ctx, sha1)
		require.ErrorIs(t, err, ErrServer)
		assert.NotErrorIs(t, err, ErrRateLimit)
		assert.Nil(t, runs)
		code, _ := HTTPStatus(err)
		assert.Equal(t, http.StatusBadGateway, code, "GitHub's answer stays in the chain")
		assert.Equal(t, 4, srv.Requests(githubtest.EndpointCheckRuns), "MaxAttempts")
		assert.Len(t, sl.Waits(), 3)

		_, err = c.PullRequests(ctx, []int{1})
		require.ErrorIs(t, err, ErrServer)
	})

	t.Run("secondary rate limit", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		srv.FailNext(100, githubtest.FaultSecondary)
		_, err := c.CheckRuns(ctx, sha1)
		require.ErrorIs(t, err, ErrRateLimit)
		var rl *RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.True(t, rl.Secondary)
		assert.NotErrorIs(t, err, ErrServer)
		assert.NotErrorIs(t, err, ErrAuth, "a limit is not a permission problem")
	})

	t.Run("secondary limit without Retry-After waits a minute: longer than MaxWait", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		f := githubtest.FaultSecondary
		f.RetryAfter = 0
		srv.FailNext(1, f)
		_, err := c.CheckRuns(ctx, sha1)
		var rl *RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.True(t, rl.Secondary)
		assert.GreaterOrEqual(t, rl.Wait, time.Minute)
		assert.Equal(t, 1, srv.TotalRequests())
		assert.Empty(t, sl.Waits())

		// Held back client-side until the minute is over, whatever the
		// resource.
		_, err = c.PullRequests(ctx, []int{1})
		require.ErrorIs(t, err, ErrRateLimit)
		assert.Equal(t, 1, srv.TotalRequests())
	})

	t.Run("primary limit exhausted", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		reset := time.Now().Add(40 * time.Minute).Truncate(time.Second)
		srv.SetRateLimit("core", 5000, 0, reset)
		_, err := c.CheckRuns(ctx, sha1)
		require.ErrorIs(t, err, ErrRateLimit)
		var rl *RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.False(t, rl.Secondary)
		assert.Equal(t, "core", rl.Resource)
		assert.WithinDuration(t, reset, rl.Reset, 2*time.Second)
		assert.Equal(t, 1, srv.TotalRequests())

		// The client knows: it does not ask again before the reset...
		_, err = c.CheckRuns(ctx, sha1)
		require.ErrorIs(t, err, ErrRateLimit)
		assert.Equal(t, 1, srv.TotalRequests())
		// ...but another resource has its own limit.
		_, err = c.PullRequests(ctx, []int{1})
		require.NoError(t, err)
		assert.Equal(t, 2, srv.TotalRequests())
	})

	t.Run("primary limit exhausted, reset within MaxWait: waits and goes on", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
		srv.SetRateLimit("core", 5000, 0, time.Now().Add(5*time.Second))
		// The wait is where the reset happens.
		sl.OnWait(func(int) { srv.SetRateLimit("core", 5000, 5000, time.Now().Add(time.Hour)) })
		runs, err := c.CheckRuns(ctx, sha1)
		require.NoError(t, err)
		assert.Len(t, runs, 1)
		require.Len(t, sl.Waits(), 1)
		assert.InDelta(t, 6*time.Second, sl.Waits()[0], float64(1500*time.Millisecond), "until the reset, plus a second")
	})

	t.Run("GraphQL primary limit", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		srv.SetRateLimit("graphql", 5000, 0, time.Now().Add(time.Hour))
		_, err := c.PullRequests(ctx, []int{1})
		require.ErrorIs(t, err, ErrRateLimit)
		assert.NotErrorIs(t, err, ErrNotFound)
		var rl *RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.Equal(t, "graphql", rl.Resource)
		assert.Greater(t, rl.Wait, 59*time.Minute, "until the reset GitHub reported")
		assert.EqualValues(t, 1, c.Stats().RateLimited)
	})

	t.Run("a create is not retried after a 5xx", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{})
		srv.FailNext(1, githubtest.Fault502)
		err := c.CreateComment(ctx, n, "hello")
		require.ErrorIs(t, err, ErrServer)
		assert.Equal(t, 1, srv.Requests(githubtest.EndpointCreateComment))
		pr, _ := srv.PR(n)
		assert.Empty(t, pr.Comments)
	})

	t.Run("a plain 403 is a permission problem, not retried", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		srv.FailNext(1, githubtest.Fault{Status: http.StatusForbidden, Message: "Resource not accessible by integration"})
		_, err := c.CheckRuns(ctx, sha1)
		require.ErrorIs(t, err, ErrAuth)
		assert.NotErrorIs(t, err, ErrRateLimit)
		assert.Contains(t, err.Error(), "the token may not do this on octo/app")
		assert.Equal(t, 1, srv.TotalRequests())
		assert.Empty(t, sl.Waits())
	})

	t.Run("context cancelled while backing off", func(t *testing.T) {
		srv := githubtest.New(t)
		ctx, cancel := context.WithCancel(ctx)
		c, sl := newClient(t, srv)
		sl.OnWait(func(int) { cancel() })
		srv.FailNext(100, githubtest.Fault500)
		_, err := c.CheckRuns(ctx, sha1)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, srv.TotalRequests())
	})
}

// A dropped connection is retried where sending twice is safe, and only
// there: a create may have gone through before the connection dropped.
func TestNetworkErrors(t *testing.T) {
	ctx := context.Background()

	t.Run("a read is retried", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
		srv.FailNext(2, githubtest.FaultHangup.On(githubtest.EndpointCheckRuns))
		runs, err := c.CheckRuns(ctx, sha1)
		require.NoError(t, err)
		assert.Len(t, runs, 1)
		assert.Equal(t, 2, srv.FaultsSent())
		assert.NotEmpty(t, sl.Waits(), "backed off")
	})

	t.Run("a create is not", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{})
		hangup := githubtest.FaultHangup.On(githubtest.EndpointCreateComment)
		hangup.AfterHandling = true
		srv.FailNext(1, hangup)
		err := c.CreateComment(ctx, n, "hello")
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrServer, "no answer is the forge's trouble: its caller looks again or waits, never blames the request")
		assert.Contains(t, err.Error(), "comment on PR #1")
		pr, _ := srv.PR(n)
		assert.Equal(t, []string{"hello"}, pr.Comments, "posted once, not twice")
		assert.Equal(t, 1, srv.Requests(githubtest.EndpointCreateComment))
	})
}
