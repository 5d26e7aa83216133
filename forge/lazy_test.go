package forge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
)

// stub is a Forge that answers PR and counts calls; the rest is unused.
type stub struct {
	forge.Forge
	prs int
}

func (s *stub) PR(_ context.Context, n int) (*forge.PR, error) {
	s.prs++
	return &forge.PR{Number: n, HeadSHA: "abc"}, nil
}

func TestLazyOpensOnceOnFirstUse(t *testing.T) {
	opened := 0
	s := &stub{}
	l := forge.Lazy(func() (forge.Forge, error) { opened++; return s, nil })
	assert.Zero(t, opened, "nothing happens until a PR is touched")
	for i := 0; i < 3; i++ {
		pr, err := l.PR(context.Background(), 4)
		require.NoError(t, err)
		assert.Equal(t, 4, pr.Number)
	}
	assert.Equal(t, 1, opened)
	assert.Equal(t, 3, s.prs)

	// The wrapper claims no capability the forge it opens lacks.
	_, ok := forge.As[forge.Approver](l)
	assert.False(t, ok)
	_, ok = forge.As[forge.MergeableWaiter](l)
	assert.False(t, ok)
	_, ok = forge.As[forge.ReviewFeed](l)
	assert.False(t, ok)
	inner, err := forge.Unwrap(l)
	require.NoError(t, err)
	assert.Same(t, s, inner)
}

// approving is a stub forge that takes approvals.
type approving struct {
	stub
	by []string
}

func (a *approving) Approve(_ context.Context, _ int, by string) error {
	a.by = append(a.by, by)
	return nil
}

func TestAsFindsACapabilityThroughWrappers(t *testing.T) {
	a := &approving{}
	inner := forge.Lazy(func() (forge.Forge, error) { return a, nil })
	outer := forge.Lazy(func() (forge.Forge, error) { return inner, nil })
	ap, ok := forge.As[forge.Approver](outer)
	require.True(t, ok)
	require.NoError(t, ap.Approve(context.Background(), 1, "human"))
	assert.Equal(t, []string{"human"}, a.by)

	f, err := forge.Unwrap(outer)
	require.NoError(t, err)
	assert.Same(t, a, f)
}

// reviewed is a stub forge with feedback on its PRs.
type reviewed struct {
	stub
	feedback map[int][]forge.Feedback
}

func (r *reviewed) Feedback(_ context.Context, n int) ([]forge.Feedback, error) {
	return r.feedback[n], nil
}

func TestAsFindsReviewFeedThroughLazy(t *testing.T) {
	said := []forge.Feedback{{ID: forge.FeedbackThread.ID("PRRT_1"), Kind: forge.FeedbackThread, Author: "alice"}}
	r := &reviewed{feedback: map[int][]forge.Feedback{3: said}}
	l := forge.Lazy(func() (forge.Forge, error) { return r, nil })

	_, claims := any(l).(forge.ReviewFeed)
	assert.False(t, claims, "the wrapper itself claims no capability")
	feed, ok := forge.As[forge.ReviewFeed](l)
	require.True(t, ok)
	got, err := feed.Feedback(context.Background(), 3)
	require.NoError(t, err)
	assert.Equal(t, said, got)
	assert.Equal(t, "thread:PRRT_1", got[0].ID)

	broken := forge.Lazy(func() (forge.Forge, error) { return nil, errors.New("no token") })
	_, ok = forge.As[forge.ReviewFeed](broken)
	assert.False(t, ok, "a forge that cannot be opened has no feed")
}

func TestLazyOpenErrorIsASetupProblem(t *testing.T) {
	l := forge.Lazy(func() (forge.Forge, error) { return nil, errors.New("no origin remote") })
	_, err := l.PR(context.Background(), 1)
	require.ErrorIs(t, err, forge.ErrUnavailable)
	assert.Contains(t, err.Error(), "no origin remote")
	_, _, err = l.EnsurePR(context.Background(), forge.NewPR{Branch: "b"})
	assert.ErrorIs(t, err, forge.ErrUnavailable)
	_, err = forge.Unwrap(l)
	assert.ErrorIs(t, err, forge.ErrUnavailable)
	_, ok := forge.As[forge.Approver](l)
	assert.False(t, ok)
}

func TestSummarize(t *testing.T) {
	s := forge.Summarize([]forge.Check{
		{Name: "a", State: forge.CheckSuccess}, {Name: "b", State: forge.CheckSkipped},
		{Name: "c", State: forge.CheckPending}, {Name: "d", State: ""},
		{Name: "e", State: forge.CheckFailure}, {Name: "f", State: forge.CheckTimedOut},
		{Name: "g", State: forge.CheckPending, Queued: true},
	})
	assert.Equal(t, 7, s.Total)
	assert.Equal(t, 3, s.Pending, "an unset state is no verdict")
	assert.Equal(t, 1, s.Queued, "of the pending, one waits to start")
	assert.Equal(t, 2, s.Passing)
	assert.Equal(t, 2, s.Failing)
	assert.Equal(t, []string{"e", "f"}, []string{s.Failed[0].Name, s.Failed[1].Name})
}
