package forge

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrUnavailable wraps the reason a forge could not be set up (no origin
// remote, no token, ...). It is a configuration problem, not an outage.
var ErrUnavailable = errors.New("forge unavailable")

// Lazy returns a Forge that opens the real one on first use, so commands
// that never touch a PR pay nothing for it. An error from open is returned
// by every call, wrapped in ErrUnavailable.
func Lazy(open func() (Forge, error)) *LazyForge {
	return &LazyForge{open: open}
}

// LazyForge is the Forge Lazy returns. It forwards the Forge methods only;
// optional capabilities of the forge it opens are found with As.
type LazyForge struct {
	open func() (Forge, error)
	once sync.Once
	f    Forge
	err  error
}

var _ Wrapper = (*LazyForge)(nil)

// Unwrap opens the forge if needed and returns it, or why it cannot be
// opened (an error wrapping ErrUnavailable).
func (l *LazyForge) Unwrap() (Forge, error) { return l.get() }

func (l *LazyForge) get() (Forge, error) {
	l.once.Do(func() {
		l.f, l.err = l.open()
		if l.err != nil {
			l.err = fmt.Errorf("%w: %w", ErrUnavailable, l.err)
		}
	})
	return l.f, l.err
}

func (l *LazyForge) EnsurePR(ctx context.Context, req NewPR) (*PR, bool, error) {
	f, err := l.get()
	if err != nil {
		return nil, false, err
	}
	return f.EnsurePR(ctx, req)
}

func (l *LazyForge) PR(ctx context.Context, number int) (*PR, error) {
	f, err := l.get()
	if err != nil {
		return nil, err
	}
	return f.PR(ctx, number)
}

func (l *LazyForge) PRs(ctx context.Context, numbers []int) (map[int]*PR, error) {
	f, err := l.get()
	if err != nil {
		return nil, err
	}
	return f.PRs(ctx, numbers)
}

func (l *LazyForge) Checks(ctx context.Context, sha string) ([]Check, error) {
	f, err := l.get()
	if err != nil {
		return nil, err
	}
	return f.Checks(ctx, sha)
}

func (l *LazyForge) Rerun(ctx context.Context, checks []Check) error {
	f, err := l.get()
	if err != nil {
		return err
	}
	return f.Rerun(ctx, checks)
}

func (l *LazyForge) Log(ctx context.Context, c Check, lines int) (string, error) {
	f, err := l.get()
	if err != nil {
		return "", err
	}
	return f.Log(ctx, c, lines)
}

func (l *LazyForge) Merge(ctx context.Context, number int, method MergeMethod, deleteBranch bool, expectHead string) error {
	f, err := l.get()
	if err != nil {
		return err
	}
	return f.Merge(ctx, number, method, deleteBranch, expectHead)
}

func (l *LazyForge) Close(ctx context.Context, number int, comment string) error {
	f, err := l.get()
	if err != nil {
		return err
	}
	return f.Close(ctx, number, comment)
}

func (l *LazyForge) Comment(ctx context.Context, number int, body string) error {
	f, err := l.get()
	if err != nil {
		return err
	}
	return f.Comment(ctx, number, body)
}
