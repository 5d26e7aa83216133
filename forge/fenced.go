package forge

import (
	"context"
	"fmt"
)

// Fence says whether the caller may still act: a controller's term as
// the one elected (docs/ARCHITECTURE.md §8, "One controller at a time").
type Fence interface {
	// Held is nil while the caller may act.
	Held(context.Context) error
	// Within is ctx, ended too when the caller may act no more.
	Within(context.Context) (context.Context, context.CancelFunc)
}

// Fenced is f whose changes (EnsurePR, Rerun, Merge, Close, Comment) are
// made only while fence says the caller may act, so a controller whose
// lease ran out while it was cut off or stalled asks the forge for
// nothing more. Each change asks the fence first and runs within it: one
// in flight (a request retried after a 5xx, waiting out a rate limit) is
// cancelled when the term ends, before another can be elected; one that
// reached the forge before is one the forge's contract makes safe to
// repeat, and the next leader does. Reads are not fenced.
//
// Like every wrapper it claims no optional capability: As finds them on
// the forge it wraps, unfenced. The controller uses none that changes a
// PR (Approver is a person's).
func Fenced(f Forge, fence Fence) *FencedForge {
	return &FencedForge{f: f, fence: fence}
}

// FencedForge is the Forge Fenced returns.
type FencedForge struct {
	f     Forge
	fence Fence
}

var _ Wrapper = (*FencedForge)(nil)

// Unwrap returns the forge it fences.
func (g *FencedForge) Unwrap() (Forge, error) { return g.f, nil }

// within is ctx bounded by the fence for the change what, or why what
// may not be asked.
func (g *FencedForge) within(ctx context.Context, what string) (context.Context, context.CancelFunc, error) {
	if err := g.fence.Held(ctx); err != nil {
		return nil, nil, fmt.Errorf("%s not asked of the forge: %w", what, err)
	}
	ctx, cancel := g.fence.Within(ctx)
	return ctx, cancel, nil
}

func (g *FencedForge) EnsurePR(ctx context.Context, req NewPR) (*PR, bool, error) {
	ctx, cancel, err := g.within(ctx, "a PR for "+req.Branch)
	if err != nil {
		return nil, false, err
	}
	defer cancel()
	return g.f.EnsurePR(ctx, req)
}

func (g *FencedForge) PR(ctx context.Context, number int) (*PR, error) { return g.f.PR(ctx, number) }

func (g *FencedForge) PRs(ctx context.Context, numbers []int) (map[int]*PR, error) {
	return g.f.PRs(ctx, numbers)
}

func (g *FencedForge) Checks(ctx context.Context, sha string) ([]Check, error) {
	return g.f.Checks(ctx, sha)
}

func (g *FencedForge) Rerun(ctx context.Context, checks []Check) error {
	ctx, cancel, err := g.within(ctx, "a rerun of CI")
	if err != nil {
		return err
	}
	defer cancel()
	return g.f.Rerun(ctx, checks)
}

func (g *FencedForge) Log(ctx context.Context, c Check, lines int) (string, error) {
	return g.f.Log(ctx, c, lines)
}

func (g *FencedForge) Merge(ctx context.Context, number int, method MergeMethod, deleteBranch bool, expectHead string) error {
	ctx, cancel, err := g.within(ctx, fmt.Sprintf("the merge of PR #%d", number))
	if err != nil {
		return err
	}
	defer cancel()
	return g.f.Merge(ctx, number, method, deleteBranch, expectHead)
}

func (g *FencedForge) Close(ctx context.Context, number int, comment string) error {
	ctx, cancel, err := g.within(ctx, fmt.Sprintf("closing PR #%d", number))
	if err != nil {
		return err
	}
	defer cancel()
	return g.f.Close(ctx, number, comment)
}

func (g *FencedForge) Comment(ctx context.Context, number int, body string) error {
	ctx, cancel, err := g.within(ctx, fmt.Sprintf("a comment on PR #%d", number))
	if err != nil {
		return err
	}
	defer cancel()
	return g.f.Comment(ctx, number, body)
}
