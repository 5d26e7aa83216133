package forge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
)

// recorder is a Forge that records the changes asked of it.
type recorder struct {
	stub
	asked []string
}

func (r *recorder) EnsurePR(context.Context, forge.NewPR) (*forge.PR, bool, error) {
	r.asked = append(r.asked, "EnsurePR")
	return &forge.PR{Number: 1}, true, nil
}

func (r *recorder) Rerun(context.Context, []forge.Check) error {
	r.asked = append(r.asked, "Rerun")
	return nil
}

func (r *recorder) Merge(context.Context, int, forge.MergeMethod, bool, string) error {
	r.asked = append(r.asked, "Merge")
	return nil
}

func (r *recorder) Close(context.Context, int, string) error {
	r.asked = append(r.asked, "Close")
	return nil
}

func (r *recorder) Comment(context.Context, int, string) error {
	r.asked = append(r.asked, "Comment")
	return nil
}

// Once the fence says the caller may no longer act, no change reaches the
// forge and each says why; reads still do.
func TestFencedAsksNoChangeOnceTheTermEnds(t *testing.T) {
	ctx := context.Background()
	lost := errors.New("this controller's term ended")
	var held error
	r := &recorder{}
	f := forge.Fenced(r, func(context.Context) error { return held })
	changes := func() []error {
		_, _, e1 := f.EnsurePR(ctx, forge.NewPR{Branch: "issue-1"})
		return []error{e1, f.Rerun(ctx, nil), f.Merge(ctx, 1, "", false, "abc"), f.Close(ctx, 1, ""), f.Comment(ctx, 1, "hi")}
	}
	for _, err := range changes() {
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"EnsurePR", "Rerun", "Merge", "Close", "Comment"}, r.asked)

	held = lost
	r.asked = nil
	for _, err := range changes() {
		require.ErrorIs(t, err, lost)
		assert.Contains(t, err.Error(), "not asked of the forge")
	}
	assert.Empty(t, r.asked, "nothing reached the forge")
	pr, err := f.PR(ctx, 4)
	require.NoError(t, err)
	assert.Equal(t, 4, pr.Number)

	_, ok := forge.As[forge.Approver](f)
	assert.False(t, ok, "the wrapper claims no capability")
	inner, err := forge.Unwrap(f)
	require.NoError(t, err)
	assert.Same(t, r, inner)
}
