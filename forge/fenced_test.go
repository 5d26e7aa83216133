package forge_test

import (
	"context"
	"errors"
	"testing"
	"time"

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
	fence := &flag{}
	r := &recorder{}
	f := forge.Fenced(r, fence)
	changes := func() []error {
		_, _, e1 := f.EnsurePR(ctx, forge.NewPR{Branch: "issue-1"})
		return []error{e1, f.Rerun(ctx, nil), f.Merge(ctx, 1, "", false, "abc"), f.Close(ctx, 1, ""), f.Comment(ctx, 1, "hi")}
	}
	for _, err := range changes() {
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"EnsurePR", "Rerun", "Merge", "Close", "Comment"}, r.asked)

	fence.err = lost
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

// flag is a fence a test raises.
type flag struct{ err error }

func (f *flag) Held(context.Context) error { return f.err }

func (f *flag) Within(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// waiting is a forge whose merge waits until its context ends: a request
// retried, or waiting out a rate limit.
type waiting struct{ stub }

func (waiting) Merge(ctx context.Context, _ int, _ forge.MergeMethod, _ bool, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

// ending is a fence that ends when end is closed.
type ending struct{ end chan struct{} }

func (e ending) Held(context.Context) error { return nil }

func (e ending) Within(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-e.end:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// A change in flight when the fence ends is cancelled then, not left to
// reach the forge while another controller acts.
func TestFencedCancelsAChangeInFlightWhenTheTermEnds(t *testing.T) {
	fence := ending{end: make(chan struct{})}
	f := forge.Fenced(&waiting{}, fence)
	done := make(chan error, 1)
	go func() { done <- f.Merge(context.Background(), 1, "", false, "abc") }()
	select {
	case err := <-done:
		t.Fatalf("the merge ended before the term: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(fence.end)
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the merge went on after the term ended")
	}
}
