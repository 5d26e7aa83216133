package github

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

func TestPRFields(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{Title: "Add widgets", Branch: "agenttree/issue-7", HeadSHA: sha1, Base: "develop",
		Draft: true, Mergeable: "CONFLICTING", ReviewDecision: "CHANGES_REQUESTED"})
	merged := srv.AddPR(githubtest.PR{State: "merged", ReviewDecision: "APPROVED"})

	pr, err := c.PR(ctx, n)
	require.NoError(t, err)
	assert.Equal(t, &forge.PR{
		Number: n, URL: fmt.Sprintf("https://github.com/octo/app/pull/%d", n), Title: "Add widgets",
		Branch: "agenttree/issue-7", Base: "develop", HeadSHA: sha1, State: forge.StateOpen, Draft: true,
		Mergeable: forge.Conflicting, ReviewDecision: forge.ReviewChangesRequested, Checks: []forge.Check{},
		FeedbackMark: "0/0/0",
	}, pr)

	pr, err = c.PR(ctx, merged)
	require.NoError(t, err)
	assert.Equal(t, forge.StateMerged, pr.State)
	assert.Equal(t, forge.ReviewApproved, pr.ReviewDecision)

	_, err = c.PR(ctx, 4242)
	assert.ErrorIs(t, err, forge.ErrNotFound)
}

func TestMergeability(t *testing.T) {
	ctx := context.Background()

	t.Run("PR returns unknown as is", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
		srv.SetMergeable(n, "MERGEABLE", 1)
		pr, err := c.PR(ctx, n)
		require.NoError(t, err)
		assert.Equal(t, forge.Unknown, pr.Mergeable)
		assert.Zero(t, len(sl.Waits()))
	})

	tests := []struct {
		name         string
		final        string
		unknownReads int
		want         string
		wantPolls    int
	}{
		{"known at once", "MERGEABLE", 0, forge.Mergeable, 1},
		{"unknown then mergeable", "MERGEABLE", 2, forge.Mergeable, 3},
		{"unknown then conflicting", "CONFLICTING", 3, forge.Conflicting, 4},
		{"still unknown after the polls", "MERGEABLE", 100, forge.Unknown, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New(t)
			c, sl := newClient(t, srv)
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
			srv.SetMergeable(n, tt.final, tt.unknownReads)

			pr, err := c.WaitMergeable(ctx, n, sha1)
			require.NoError(t, err)
			assert.Equal(t, tt.want, pr.Mergeable)
			assert.Equal(t, tt.wantPolls, srv.Requests(githubtest.EndpointGraphQL))
			waits := sl.Waits()
			assert.Len(t, waits, tt.wantPolls-1)
			for i := 1; i < len(waits); i++ {
				assert.Greater(t, waits[i], waits[i-1], "backs off")
			}
		})
	}

	t.Run("aborts when the head changes meanwhile", func(t *testing.T) {
		srv := githubtest.New(t)
		c, sl := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
		srv.SetMergeable(n, "MERGEABLE", 5)
		sl.OnWait(func(int) { srv.SetHead(n, sha2) }) // a push while waiting

		pr, err := c.WaitMergeable(ctx, n, "")
		require.ErrorIs(t, err, forge.ErrHeadChanged)
		assert.Contains(t, err.Error(), "aborted")
		assert.Equal(t, sha2, pr.HeadSHA)
		assert.Equal(t, 1, len(sl.Waits()))
	})

	t.Run("aborts when the head is not the expected one", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha2})
		_, err := c.WaitMergeable(ctx, n, sha1)
		require.ErrorIs(t, err, forge.ErrHeadChanged)
	})

	t.Run("a PR closed meanwhile is returned", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1, State: "closed"})
		pr, err := c.WaitMergeable(ctx, n, sha1)
		require.NoError(t, err)
		assert.Equal(t, forge.StateClosed, pr.State)
		assert.Equal(t, 1, srv.Requests(githubtest.EndpointGraphQL))
	})
}

// GitHub leaves reviewDecision null where branch protection requires no
// review; the writers' latest reviews decide then.
func TestReviewDecisionWithoutRequiredReviews(t *testing.T) {
	approve := func(who string) githubtest.Review { return githubtest.Review{Author: who, State: "APPROVED"} }
	changes := func(who string) githubtest.Review { return githubtest.Review{Author: who, State: "CHANGES_REQUESTED"} }
	tests := []struct {
		name     string
		decision string // GitHub's; "" = null
		reviews  []githubtest.Review
		want     string
	}{
		{"no reviews", "", nil, forge.ReviewNone},
		{"approved", "", []githubtest.Review{approve("alice")}, forge.ReviewApproved},
		{"changes requested", "", []githubtest.Review{changes("bob")}, forge.ReviewChangesRequested},
		{"changes requested outweigh an approval", "", []githubtest.Review{approve("alice"), changes("bob")}, forge.ReviewChangesRequested},
		{"a reviewer's latest review counts", "", []githubtest.Review{changes("bob"), approve("bob")}, forge.ReviewApproved},
		{"comments are no verdict", "", []githubtest.Review{{Author: "carol", State: "COMMENTED"}}, forge.ReviewNone},
		{"a dismissed approval is none", "", []githubtest.Review{approve("alice"), {Author: "alice", State: "DISMISSED"}}, forge.ReviewNone},
		{"an approval without write access is none", "", []githubtest.Review{{Author: "stranger", State: "APPROVED", NoWriteAccess: true}}, forge.ReviewNone},
		{"GitHub's decision wins", "REVIEW_REQUIRED", []githubtest.Review{approve("alice")}, forge.ReviewRequired},
		{"GitHub's approval wins", "APPROVED", []githubtest.Review{changes("bob")}, forge.ReviewApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv)
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1, ReviewDecision: tt.decision})
			for _, rv := range tt.reviews {
				srv.AddReview(n, rv)
			}
			pr, err := c.PR(context.Background(), n)
			require.NoError(t, err)
			assert.Equal(t, tt.want, pr.ReviewDecision)
			prs, err := c.PRs(context.Background(), []int{n, n + 1})
			require.NoError(t, err)
			assert.Equal(t, tt.want, prs[n].ReviewDecision, "batched")
		})
	}
}
