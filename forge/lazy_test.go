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

	// A forge that takes no approvals from agenttree: approving is a no-op.
	require.NoError(t, l.Approve(context.Background(), 4, "human"))
	// A forge that does not compute mergeability in the background: its PR.
	pr, err := l.WaitMergeable(context.Background(), 4, "abc")
	require.NoError(t, err)
	assert.Equal(t, "abc", pr.HeadSHA)
}

func TestLazyOpenErrorIsASetupProblem(t *testing.T) {
	l := forge.Lazy(func() (forge.Forge, error) { return nil, errors.New("no origin remote") })
	_, err := l.PR(context.Background(), 1)
	require.ErrorIs(t, err, forge.ErrUnavailable)
	assert.Contains(t, err.Error(), "no origin remote")
	_, _, err = l.EnsurePR(context.Background(), forge.NewPR{Branch: "b"})
	assert.ErrorIs(t, err, forge.ErrUnavailable)
}

func TestSummarize(t *testing.T) {
	s := forge.Summarize([]forge.Check{
		{Name: "a", State: forge.CheckSuccess}, {Name: "b", State: forge.CheckSkipped},
		{Name: "c", State: forge.CheckPending}, {Name: "d", State: ""},
		{Name: "e", State: forge.CheckFailure}, {Name: "f", State: forge.CheckTimedOut},
	})
	assert.Equal(t, 6, s.Total)
	assert.Equal(t, 2, s.Pending, "an unset state is no verdict")
	assert.Equal(t, 2, s.Passing)
	assert.Equal(t, 2, s.Failing)
	assert.Equal(t, []string{"e", "f"}, []string{s.Failed[0].Name, s.Failed[1].Name})
}
