package ghapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/internal/gittest"
)

func TestAuthErrors(t *testing.T) {
	ctx := context.Background()

	t.Run("no token", func(t *testing.T) {
		_, err := New(ctx, Options{Repo: "octo/app"})
		require.ErrorIs(t, err, ErrAuth)
		assert.Contains(t, err.Error(), "no GitHub token for github.com")
		assert.Contains(t, err.Error(), "gh auth login")
		assert.Contains(t, err.Error(), "GH_TOKEN")
	})

	t.Run("no token for an Enterprise host", func(t *testing.T) {
		_, err := New(ctx, Options{Repo: "ghe.example.com/octo/app", Host: "ghe.example.com"})
		require.ErrorIs(t, err, ErrAuth)
		assert.Contains(t, err.Error(), "GH_ENTERPRISE_TOKEN")
	})

	t.Run("token from the environment", func(t *testing.T) {
		srv := githubtest.New(t)
		t.Setenv("GH_TOKEN", srv.Token)
		c, err := New(ctx, Options{Repo: "octo/app", BaseURL: srv.URL})
		require.NoError(t, err)
		_, err = c.CheckRuns(ctx, sha1)
		require.NoError(t, err)
	})

	t.Run("rejected token", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv, func(o *Options) { o.Token = "wrong" })
		_, err := c.CheckRuns(ctx, sha1)
		require.ErrorIs(t, err, ErrAuth)
		assert.Contains(t, err.Error(), "gh auth login")
		_, err = c.PullRequests(ctx, []int{1})
		require.ErrorIs(t, err, ErrAuth)
		assert.Equal(t, 2, srv.TotalRequests(), "a 401 is not retried")
	})
}

// An Enterprise repository goes through /api/v3 and /api/graphql.
func TestEnterpriseHostEndToEnd(t *testing.T) {
	srv := githubtest.New(t)
	t.Setenv("GH_ENTERPRISE_TOKEN", srv.Token)
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q")
	gittest.Run(t, dir, "remote", "add", "origin", "git@ghe.example.com:octo/app.git")
	c, err := New(context.Background(), Options{RepoDir: dir, BaseURL: srv.URL})
	require.NoError(t, err)
	assert.Equal(t, "ghe.example.com", c.Repo().Host)

	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	prs, err := c.PullRequests(context.Background(), []int{n})
	require.NoError(t, err)
	assert.Len(t, prs[n].CheckRuns, 1)
	runs, err := c.CheckRuns(context.Background(), sha1)
	require.NoError(t, err)
	assert.Len(t, runs, 1)
}
