package github

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// GitHub's problems reach the engine as forge errors, so that it tells a
// limit, a bad token or a missing PR apart without knowing GitHub.
func TestErrorsAreForgeErrors(t *testing.T) {
	ctx := context.Background()

	t.Run("rate limit", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		f := githubtest.FaultSecondary
		f.RetryAfter = 90
		srv.FailNext(1, f)
		_, err := c.Checks(ctx, sha1)
		require.ErrorIs(t, err, forge.ErrRateLimit)
		var rl *forge.RateLimitError
		require.ErrorAs(t, err, &rl)
		assert.True(t, rl.Secondary)
		assert.Equal(t, "GitHub", rl.Forge, "the limit is named for the forge that set it")
		assert.Equal(t, 90*time.Second, rl.RetryAfter)
		assert.WithinDuration(t, time.Now().Add(90*time.Second), rl.Reset, 5*time.Second)
		assert.Contains(t, err.Error(), "check runs of "+sha1[:12], "the client's message, saying what it was doing")
		assert.Equal(t, 1, srv.TotalRequests(), "a wait over MaxWait is the caller's to schedule")
	})

	t.Run("rejected token", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv, func(o *Options) { o.Token = "wrong" })
		_, err := c.PRs(ctx, []int{1})
		require.ErrorIs(t, err, forge.ErrAuth)
		assert.NotErrorIs(t, err, forge.ErrRateLimit)
		assert.Contains(t, err.Error(), "gh auth login")
	})

	t.Run("no token", func(t *testing.T) {
		_, err := New(ctx, Options{Repo: "octo/app"})
		require.ErrorIs(t, err, forge.ErrAuth)
		assert.Contains(t, err.Error(), "no GitHub token for github.com")
	})

	t.Run("missing PR", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		require.ErrorIs(t, c.Merge(ctx, 77, forge.MergeSquash, false, ""), forge.ErrNotFound)
		require.ErrorIs(t, c.Close(ctx, 77, ""), forge.ErrNotFound)
		_, err := c.PR(ctx, 77)
		require.ErrorIs(t, err, forge.ErrNotFound)
	})

	t.Run("an outage is none of them", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		srv.FailNext(100, githubtest.Fault502)
		_, err := c.PRs(ctx, []int{1})
		requireOutage(t, err)
	})
}

// The engine opens the forge lazily; what the GitHub forge can do beyond
// forge.Forge is still found through the wrapper, and nothing more.
func TestCapabilitiesThroughALazyForge(t *testing.T) {
	srv := githubtest.New(t)
	c, sl := newClient(t, srv)
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	srv.SetMergeable(n, "MERGEABLE", 2)
	opened := 0
	lazy := forge.Lazy(func() (forge.Forge, error) { opened++; return c, nil })

	w, ok := forge.As[forge.MergeableWaiter](lazy)
	require.True(t, ok, "the GitHub forge waits for mergeability")
	pr, err := w.WaitMergeable(context.Background(), n, sha1)
	require.NoError(t, err)
	assert.Equal(t, forge.Mergeable, pr.Mergeable)
	assert.Len(t, sl.Waits(), 2, "polled through the client's sleep")

	feed, ok := forge.As[forge.ReviewFeed](lazy)
	require.True(t, ok, "the GitHub forge lists what reviewers said")
	srv.AddComment(n, githubtest.Comment{Author: "alice", Body: "hm"})
	got, err := feed.Feedback(context.Background(), n)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "alice", got[0].Author)

	_, ok = forge.As[forge.Approver](lazy)
	assert.False(t, ok, "approvals on GitHub are reviews, not `agenttree approve`")
	_, ok = forge.As[forge.ConflictLister](lazy)
	assert.False(t, ok)
	assert.Equal(t, 1, opened)
}
