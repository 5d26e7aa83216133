package controller

import (
	"context"
	"maps"
	"sync"

	"github.com/agenttree/agenttree/forge"
)

// batchForge answers the hooks' questions about PRs from the state the
// tick fetched for every due issue at once (forge.PRs: one GraphQL request
// per 50 PRs on GitHub), so a thousand waiting issues cost a few requests
// a tick, not a few each. What it does not hold, and every change, goes to
// the forge it wraps; a change drops what it held of that PR, so nothing
// reads its own write stale. It claims no capability of its own: As finds
// them past it.
type batchForge struct {
	inner forge.Forge

	mu  sync.Mutex
	prs map[int]*forge.PR
}

var (
	_ forge.Wrapper = (*batchForge)(nil)
	_ forge.Cache   = (*batchForge)(nil)
)

func (b *batchForge) Unwrap() (forge.Forge, error) { return b.inner, nil }

// reset empties the batch: a tick starts afresh.
func (b *batchForge) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prs = map[int]*forge.PR{}
}

// fetch adds the state of numbers, fetched now, to the batch.
func (b *batchForge) fetch(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	if len(numbers) == 0 {
		return nil, nil
	}
	prs, err := b.inner.PRs(ctx, numbers)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prs == nil {
		b.prs = map[int]*forge.PR{}
	}
	maps.Copy(b.prs, prs)
	return prs, err
}

func (b *batchForge) cached(number int) (*forge.PR, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pr, ok := b.prs[number]
	if !ok {
		return nil, false
	}
	c := *pr
	return &c, true
}

// Forget drops what the batch holds of PR number (forge.Cache).
func (b *batchForge) Forget(number int) { b.drop(number) }

func (b *batchForge) drop(number int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.prs, number)
}

func (b *batchForge) EnsurePR(ctx context.Context, req forge.NewPR) (*forge.PR, bool, error) {
	pr, created, err := b.inner.EnsurePR(ctx, req)
	if pr != nil {
		b.drop(pr.Number)
	}
	return pr, created, err
}

func (b *batchForge) PR(ctx context.Context, number int) (*forge.PR, error) {
	if pr, ok := b.cached(number); ok {
		return pr, nil
	}
	return b.inner.PR(ctx, number)
}

func (b *batchForge) PRs(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	return b.inner.PRs(ctx, numbers)
}

// Checks answers from a batched PR whose head is sha, when the forge
// reported its checks with it.
func (b *batchForge) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	b.mu.Lock()
	var found []forge.Check
	for _, pr := range b.prs {
		if pr.HeadSHA == sha && pr.Checks != nil {
			found = append([]forge.Check(nil), pr.Checks...)
			break
		}
	}
	b.mu.Unlock()
	if found != nil {
		return found, nil
	}
	return b.inner.Checks(ctx, sha)
}

func (b *batchForge) Rerun(ctx context.Context, checks []forge.Check) error {
	b.mu.Lock()
	for n, pr := range b.prs {
		for _, ch := range checks {
			if pr.HeadSHA == ch.SHA {
				delete(b.prs, n)
				break
			}
		}
	}
	b.mu.Unlock()
	return b.inner.Rerun(ctx, checks)
}

func (b *batchForge) Log(ctx context.Context, c forge.Check, lines int) (string, error) {
	return b.inner.Log(ctx, c, lines)
}

func (b *batchForge) Merge(ctx context.Context, number int, method forge.MergeMethod, deleteBranch bool, expectHead string) error {
	b.drop(number)
	return b.inner.Merge(ctx, number, method, deleteBranch, expectHead)
}

func (b *batchForge) Close(ctx context.Context, number int, comment string) error {
	b.drop(number)
	return b.inner.Close(ctx, number, comment)
}

func (b *batchForge) Comment(ctx context.Context, number int, body string) error {
	return b.inner.Comment(ctx, number, body)
}
