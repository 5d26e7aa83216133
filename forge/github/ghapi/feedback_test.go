package ghapi

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest"
)

func TestCommentsAndReviewsReadEveryPage(t *testing.T) {
	tests := []struct {
		name      string
		items     int
		wantPages int
	}{
		{"none", 0, 1},
		{"one page", 3, 1},
		{"a full page asks for the next", perPage, 2},
		{"two pages", perPage + 30, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv)
			ctx := context.Background()
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
			for i := range tt.items {
				srv.AddComment(n, githubtest.Comment{Author: "alice", Body: fmt.Sprintf("comment %d", i)})
				srv.AddReview(n, githubtest.Review{Author: "bob", State: "COMMENTED", Body: fmt.Sprintf("review %d", i)})
			}

			comments, err := c.Comments(ctx, n)
			require.NoError(t, err)
			reviews, err := c.PullReviews(ctx, n)
			require.NoError(t, err)
			require.Len(t, comments, tt.items)
			require.Len(t, reviews, tt.items)
			assert.Equal(t, tt.wantPages, srv.Requests(githubtest.EndpointListComments))
			assert.Equal(t, tt.wantPages, srv.Requests(githubtest.EndpointListReviews))
			if tt.items == 0 {
				return
			}
			last := tt.items - 1
			assert.Equal(t, fmt.Sprintf("comment %d", last), comments[last].Body, "oldest first")
			assert.Equal(t, "alice", comments[0].User.Login)
			assert.Contains(t, comments[0].HTMLURL, fmt.Sprintf("#issuecomment-%d", comments[0].ID))
			assert.False(t, comments[0].CreatedAt.IsZero())
			assert.Equal(t, fmt.Sprintf("review %d", last), reviews[last].Body)
			assert.Equal(t, "bob", reviews[0].User.Login)
			assert.Equal(t, "COMMENTED", reviews[0].State)
			assert.Equal(t, sha1, reviews[0].CommitID)
			require.NotNil(t, reviews[0].SubmittedAt)
		})
	}
}

func TestCommentsAndReviewsUnchangedCostNoRateLimit(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	srv.AddComment(n, githubtest.Comment{Author: "alice", Body: "why?"})
	srv.AddReview(n, githubtest.Review{Author: "bob", State: "CHANGES_REQUESTED", Body: "no"})
	read := func() ([]Comment, []PullReview) {
		t.Helper()
		comments, err := c.Comments(ctx, n)
		require.NoError(t, err)
		reviews, err := c.PullReviews(ctx, n)
		require.NoError(t, err)
		return comments, reviews
	}
	comments, reviews := read()
	used := coreUsed(t, c)

	again, againReviews := read()
	assert.Equal(t, comments, again)
	assert.Equal(t, reviews, againReviews)
	assert.Equal(t, 2, srv.NotModified(githubtest.EndpointListComments, githubtest.EndpointListReviews))
	assert.Equal(t, used, coreUsed(t, c), "304s cost no rate limit")

	srv.AddComment(n, githubtest.Comment{Author: "carol", Body: "and this?"})
	again, _ = read()
	require.Len(t, again, 2, "a new comment is a 200, not a stale cache hit")
	assert.Equal(t, "carol", again[1].User.Login)
}

func TestReviewThreads(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	const threads = perPage + 20
	var ids []string
	for i := range threads {
		ids = append(ids, srv.AddThread(n, githubtest.Thread{Path: fmt.Sprintf("f%d.go", i), Line: i,
			Comments: []githubtest.Comment{{Author: "alice", Body: fmt.Sprintf("thread %d", i)}}}))
	}
	srv.ResolveThread(n, ids[5])
	for i := range threadComments + 5 {
		srv.ReplyToThread(n, ids[1], githubtest.Comment{Author: "bob", Body: fmt.Sprintf("reply %d", i)})
	}
	other := srv.AddPR(githubtest.PR{HeadSHA: sha2})

	got, err := c.ReviewThreads(ctx, n)
	require.NoError(t, err)
	require.Len(t, got, threads, "resolved ones too: the client speaks GitHub")
	assert.Equal(t, 2, srv.Queries("ReviewThreads"), "pages of a hundred")
	assert.Equal(t, ids[threads-1], got[threads-1].ID)
	assert.True(t, got[5].IsResolved)
	assert.False(t, got[4].IsResolved)
	assert.Equal(t, "f7.go", got[7].Path)
	assert.Equal(t, 7, got[7].Line)
	assert.Zero(t, got[0].Line, "an outdated thread has no line")

	long := got[1]
	require.Len(t, long.Comments, threadComments)
	assert.Equal(t, 6, long.MoreComments, "the first comment and 55 replies, 50 read")
	assert.Equal(t, "alice", long.Comments[0].Author)
	assert.Equal(t, "thread 1", long.Comments[0].Body)
	assert.Equal(t, "reply 0", long.Comments[1].Body)
	assert.Contains(t, long.Comments[0].URL, "#discussion_r")
	assert.False(t, long.Comments[0].CreatedAt.IsZero())

	none, err := c.ReviewThreads(ctx, other)
	require.NoError(t, err)
	assert.Empty(t, none)

	_, err = c.ReviewThreads(ctx, 4242)
	require.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "review threads of PR #4242")
}

func TestPullRequestsCountFeedback(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1, Comments: []string{"opened"}})
	srv.AddComment(n, githubtest.Comment{Author: "alice", Body: "hm"})
	srv.AddReview(n, githubtest.Review{Author: "bob", State: "APPROVED"})
	id := srv.AddThread(n, githubtest.Thread{Path: "a.go", Line: 1, Comments: []githubtest.Comment{{Body: "x"}}})
	srv.ResolveThread(n, id)

	prs, err := c.PullRequests(context.Background(), []int{n})
	require.NoError(t, err)
	pr := prs[n]
	assert.Equal(t, 2, pr.CommentCount)
	assert.Equal(t, 1, pr.ReviewCount)
	assert.Equal(t, 1, pr.ThreadCount, "resolved or not")
	assert.Equal(t, 1, srv.TotalRequests(), "in the batched query")
}
