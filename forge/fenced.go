package forge

import (
	"context"
	"fmt"
)

// Fenced is f whose changes (EnsurePR, Rerun, Merge, Close, Comment) are
// made only while held says the caller may act: a controller checks its
// term as the one elected (docs/ARCHITECTURE.md §8, "One controller at a
// time"), so one whose lease ran out while it was cut off or stalled asks
// the forge for nothing more. Reads are not fenced. held is asked just
// before each change; a change already sent when the term ends is one
// the forge's contract makes safe to repeat, and the next leader does.
//
// Like every wrapper it claims no optional capability: As finds them on
// the forge it wraps, unfenced. The controller uses none that changes a
// PR (Approver is a person's).
func Fenced(f Forge, held func(context.Context) error) *FencedForge {
	return &FencedForge{f: f, held: held}
}

// FencedForge is the Forge Fenced returns.
type FencedForge struct {
	f    Forge
	held func(context.Context) error
}

var _ Wrapper = (*FencedForge)(nil)

// Unwrap returns the forge it fences.
func (g *FencedForge) Unwrap() (Forge, error) { return g.f, nil }

// check is held's answer for the change what.
func (g *FencedForge) check(ctx context.Context, what string) error {
	if err := g.held(ctx); err != nil {
		return fmt.Errorf("%s not asked of the forge: %w", what, err)
	}
	return nil
}

func (g *FencedForge) EnsurePR(ctx context.Context, req NewPR) (*PR, bool, error) {
	if err := g.check(ctx, "a PR for "+req.Branch); err != nil {
		return nil, false, err
	}
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
	if err := g.check(ctx, "a rerun of CI"); err != nil {
		return err
	}
	return g.f.Rerun(ctx, checks)
}

func (g *FencedForge) Log(ctx context.Context, c Check, lines int) (string, error) {
	return g.f.Log(ctx, c, lines)
}

func (g *FencedForge) Merge(ctx context.Context, number int, method MergeMethod, deleteBranch bool, expectHead string) error {
	if err := g.check(ctx, fmt.Sprintf("the merge of PR #%d", number)); err != nil {
		return err
	}
	return g.f.Merge(ctx, number, method, deleteBranch, expectHead)
}

func (g *FencedForge) Close(ctx context.Context, number int, comment string) error {
	if err := g.check(ctx, fmt.Sprintf("closing PR #%d", number)); err != nil {
		return err
	}
	return g.f.Close(ctx, number, comment)
}

func (g *FencedForge) Comment(ctx context.Context, number int, body string) error {
	if err := g.check(ctx, fmt.Sprintf("a comment on PR #%d", number)); err != nil {
		return err
	}
	return g.f.Comment(ctx, number, body)
}
