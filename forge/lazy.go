package forge

import (
	"context"
	"fmt"
	"sync"
)

// ErrUnavailable wraps the reason a forge could not be set up (no origin
// remote, no token, ...). It is a configuration problem, not an outage.
var ErrUnavailable = fmt.Errorf("forge unavailable")

// Lazy returns a Forge that opens the real one on first use, so commands
// that never touch a PR pay nothing for it. An error from open is returned
// by every call, wrapped in ErrUnavailable.
func Lazy(open func() (Forge, error)) *LazyForge {
	return &LazyForge{open: open}
}

// LazyForge is the Forge Lazy returns.
type LazyForge struct {
	open func() (Forge, error)
	once sync.Once
	f    Forge
	err  error
}

// Get opens the forge if needed.
func (l *LazyForge) Get() (Forge, error) {
	l.once.Do(func() {
		l.f, l.err = l.open()
		if l.err != nil {
			l.err = fmt.Errorf("%w: %w", ErrUnavailable, l.err)
		}
	})
	return l.f, l.err
}

func (l *LazyForge) EnsurePR(ctx context.Context, req NewPR) (*PR, bool, error) {
	f, err := l.Get()
	if err != nil {
		return nil, false, err
	}
	return f.EnsurePR(ctx, req)
}

func (l *LazyForge) PR(ctx context.Context, number int) (*PR, error) {
	f, err := l.Get()
	if err != nil {
		return nil, err
	}
	return f.PR(ctx, number)
}

func (l *LazyForge) PRs(ctx context.Context, numbers []int) (map[int]*PR, error) {
	f, err := l.Get()
	if err != nil {
		return nil, err
	}
	return f.PRs(ctx, numbers)
}

func (l *LazyForge) Checks(ctx context.Context, sha string) ([]Check, error) {
	f, err := l.Get()
	if err != nil {
		return nil, err
	}
	return f.Checks(ctx, sha)
}

func (l *LazyForge) Rerun(ctx context.Context, checks []Check) error {
	f, err := l.Get()
	if err != nil {
		return err
	}
	return f.Rerun(ctx, checks)
}

func (l *LazyForge) Log(ctx context.Context, c Check, lines int) (string, error) {
	f, err := l.Get()
	if err != nil {
		return "", err
	}
	return f.Log(ctx, c, lines)
}

func (l *LazyForge) Merge(ctx context.Context, number int, method MergeMethod, deleteBranch bool, expectHead string) error {
	f, err := l.Get()
	if err != nil {
		return err
	}
	return f.Merge(ctx, number, method, deleteBranch, expectHead)
}

func (l *LazyForge) Close(ctx context.Context, number int, comment string) error {
	f, err := l.Get()
	if err != nil {
		return err
	}
	return f.Close(ctx, number, comment)
}

func (l *LazyForge) Comment(ctx context.Context, number int, body string) error {
	f, err := l.Get()
	if err != nil {
		return err
	}
	return f.Comment(ctx, number, body)
}

// Approve records an approval where the forge takes approvals from
// agenttree; elsewhere (GitHub) reviews happen on the forge and this is a
// no-op.
func (l *LazyForge) Approve(ctx context.Context, number int, by string) error {
	f, err := l.Get()
	if err != nil {
		return err
	}
	if ap, ok := f.(Approver); ok {
		return ap.Approve(ctx, number, by)
	}
	return nil
}

// WaitMergeable polls mergeability where the forge computes it in the
// background; elsewhere it returns the PR as it is.
func (l *LazyForge) WaitMergeable(ctx context.Context, number int, expectHead string) (*PR, error) {
	f, err := l.Get()
	if err != nil {
		return nil, err
	}
	if w, ok := f.(MergeableWaiter); ok {
		return w.WaitMergeable(ctx, number, expectHead)
	}
	return f.PR(ctx, number)
}

// ConflictFiles names conflicting files where the forge can.
func (l *LazyForge) ConflictFiles(ctx context.Context, number int) ([]string, error) {
	f, err := l.Get()
	if err != nil {
		return nil, err
	}
	if cl, ok := f.(ConflictLister); ok {
		return cl.ConflictFiles(ctx, number)
	}
	return nil, nil
}
