package github

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

func TestEnsurePRIsIdempotent(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	srv.SetBranch("agenttree/issue-7", sha1)
	req := forge.NewPR{Branch: "agenttree/issue-7", Title: "Issue 7: widgets", Body: "Closes #7", Draft: true,
		Labels: []string{"agenttree", "automated"}}

	first, created, err := c.EnsurePR(ctx, req)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "main", first.Base, "the default branch")
	assert.Equal(t, sha1, first.HeadSHA)
	assert.Equal(t, forge.StateOpen, first.State)
	assert.True(t, first.Draft)

	second, created, err := c.EnsurePR(ctx, req)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, first.Number, second.Number)
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointCreatePull))
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointAddLabels), "labels already there")
	assert.Equal(t, 1, srv.PRCount())

	got, _ := srv.PR(first.Number)
	assert.Equal(t, "Issue 7: widgets", got.Title)
	assert.Equal(t, "Closes #7", got.Body)
	assert.ElementsMatch(t, []string{"agenttree", "automated"}, got.Labels)

	// A label added to the config later reaches the existing PR.
	req.Labels = append(req.Labels, "ready")
	_, created, err = c.EnsurePR(ctx, req)
	require.NoError(t, err)
	assert.False(t, created)
	got, _ = srv.PR(first.Number)
	assert.Contains(t, got.Labels, "ready")

	// Once closed, a new PR is opened for the branch.
	srv.SetState(first.Number, "closed")
	third, created, err := c.EnsurePR(ctx, req)
	require.NoError(t, err)
	assert.True(t, created)
	assert.NotEqual(t, first.Number, third.Number)
}

func TestEnsurePRErrors(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()

	_, _, err := c.EnsurePR(ctx, forge.NewPR{Branch: "never-pushed", Base: "main"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "head")

	// A 502 before GitHub did anything: the error, and one create only.
	srv.ResetCounts()
	srv.SetBranch("feature", sha1)
	srv.FailNext(1, githubtest.Fault502.On(githubtest.EndpointCreatePull))
	_, _, err = c.EnsurePR(ctx, forge.NewPR{Branch: "feature", Base: "main"})
	require.ErrorIs(t, err, ghapi.ErrServer)
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointCreatePull), "a create is not retried blindly")
	assert.Zero(t, srv.PRCount())

	// A 502 after GitHub made the PR: found on a second look, not opened
	// twice.
	lost := githubtest.Fault502.On(githubtest.EndpointCreatePull)
	lost.AfterHandling = true
	srv.FailNext(1, lost)
	pr, created, err := c.EnsurePR(ctx, forge.NewPR{Branch: "feature", Base: "main", Labels: []string{"agenttree"}})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 2, srv.Requests(githubtest.EndpointCreatePull))
	assert.Equal(t, 1, srv.PRCount())
	got, _ := srv.PR(pr.Number)
	assert.Equal(t, []string{"agenttree"}, got.Labels)
}

func TestMerge(t *testing.T) {
	ctx := context.Background()

	t.Run("merges and deletes the branch; again is a success", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{Branch: "agenttree/issue-7", HeadSHA: sha1})

		require.NoError(t, c.Merge(ctx, n, forge.MergeSquash, true, ""))
		pr, _ := srv.PR(n)
		assert.Equal(t, "merged", pr.State)
		assert.Equal(t, "squash", pr.MergeMethod)
		_, exists := srv.Branch("agenttree/issue-7")
		assert.False(t, exists)

		require.NoError(t, c.Merge(ctx, n, forge.MergeSquash, true, ""))
		assert.Equal(t, 1, srv.Requests(githubtest.EndpointMergePull), "merged already: not asked again")
		got, err := c.PR(ctx, n)
		require.NoError(t, err)
		assert.Equal(t, forge.StateMerged, got.State)
	})

	t.Run("GitHub's 405 already merged is a success", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
		srv.FailNext(1, githubtest.Fault{Status: http.StatusMethodNotAllowed, Message: "Pull Request is already merged",
			Endpoint: githubtest.EndpointMergePull})
		require.NoError(t, c.Merge(ctx, n, forge.MergeRebase, false, ""))
	})

	t.Run("merged by someone else meanwhile", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1, State: "merged"})
		require.NoError(t, c.Merge(ctx, n, forge.MergeMerge, false, ""))
		assert.Zero(t, srv.Requests(githubtest.EndpointMergePull))
	})

	t.Run("conflicts", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1, Mergeable: "CONFLICTING"})
		err := c.Merge(ctx, n, forge.MergeSquash, true, "")
		require.ErrorIs(t, err, forge.ErrConflict)
		_, exists := srv.Branch("branch-1")
		assert.True(t, exists, "an unmerged branch is kept")
	})

	t.Run("closed unmerged", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1, State: "closed"})
		err := c.Merge(ctx, n, forge.MergeSquash, false, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "closed without being merged")
	})

	t.Run("branch already deleted", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{Branch: "gone", HeadSHA: sha1})
		require.NoError(t, c.Merge(ctx, n, forge.MergeSquash, true, ""))
		require.NoError(t, c.Merge(ctx, n, forge.MergeSquash, true, ""))
		assert.Equal(t, 2, srv.Requests(githubtest.EndpointDeleteRef))
	})

	t.Run("missing PR", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		require.ErrorIs(t, c.Merge(ctx, 77, forge.MergeSquash, false, ""), forge.ErrNotFound)
	})
}

func TestCloseAndComment(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})

	require.NoError(t, c.Comment(ctx, n, "CI is green"))
	require.NoError(t, c.Close(ctx, n, "Abandoned: see issue"))
	require.NoError(t, c.Close(ctx, n, "Abandoned: see issue"))
	pr, _ := srv.PR(n)
	assert.Equal(t, "closed", pr.State)
	assert.Equal(t, []string{"CI is green", "Abandoned: see issue"}, pr.Comments, "no second comment on a closed PR")

	merged := srv.AddPR(githubtest.PR{State: "merged"})
	err := c.Close(ctx, merged, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already merged")
}

// A close that fails after its comment went up is retried without a
// second comment.
func TestCloseRetryDoesNotRepeatTheComment(t *testing.T) {
	for _, earlier := range []int{0, 150} {
		t.Run(fmt.Sprintf("%d earlier comments", earlier), func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv)
			ctx := context.Background()
			var comments []string
			for i := range earlier {
				comments = append(comments, fmt.Sprintf("comment %d", i))
			}
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1, Comments: comments})

			srv.FailNext(100, githubtest.Fault500.On(githubtest.EndpointUpdatePull))
			err := c.Close(ctx, n, "Abandoned: see issue 7")
			require.ErrorIs(t, err, ghapi.ErrServer)
			srv.ClearFaults()
			pr, _ := srv.PR(n)
			assert.Equal(t, "open", pr.State)
			assert.Len(t, pr.Comments, earlier+1, "the comment went up before the close failed")

			require.NoError(t, c.Close(ctx, n, "Abandoned: see issue 7"))
			pr, _ = srv.PR(n)
			assert.Equal(t, "closed", pr.State)
			assert.Len(t, pr.Comments, earlier+1)
			assert.Equal(t, "Abandoned: see issue 7", pr.Comments[earlier])
			assert.Equal(t, 1, srv.Requests(githubtest.EndpointCreateComment))
		})
	}

	// Another comment already there does not stop this one.
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1, Comments: []string{"CI is green"}})
	require.NoError(t, c.Close(context.Background(), n, "Abandoned"))
	pr, _ := srv.PR(n)
	assert.Equal(t, []string{"CI is green", "Abandoned"}, pr.Comments)
}
