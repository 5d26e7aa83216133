// Package prbatch is the forge the controller's hooks read within a tick
// (docs/ARCHITECTURE.md §6): the state of the tick's due PRs, fetched in
// batches, in front of the forge.
package prbatch

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/agenttree/agenttree/forge"
)

// Forge answers the hooks' questions about PRs from the state the
// tick fetched for every due issue at once (forge.PRs: one GraphQL request
// per 50 PRs on GitHub), so a thousand waiting issues cost a few requests
// a tick, not a few each. What it does not hold, and every change, goes to
// the forge it wraps; a change drops what it held of that PR, so nothing
// reads its own write stale. It claims no capability of its own: As finds
// them past it.
type Forge struct {
	Inner forge.Forge

	mu  sync.Mutex
	prs map[int]*forge.PR
	// heads are the numbers of the PRs held, by head: a pass asks for
	// its head's checks, and a scan of every PR held for it made a tick
	// of 10,000 PRs quadratic (bench/README.md). An entry may name a PR
	// dropped since, or of another head now: prs is the truth.
	heads map[string][]int
}

var (
	_ forge.Wrapper = (*Forge)(nil)
	_ forge.Cache   = (*Forge)(nil)
)

func (b *Forge) Unwrap() (forge.Forge, error) { return b.Inner, nil }

// Reset empties the batch: a tick starts afresh, or is over (nothing
// read between ticks is the tick's state, and a tick of 10,000 PRs held
// them until the next, bench/README.md).
func (b *Forge) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prs, b.heads = nil, nil
}

// Drop drops what the batch still holds of prs, a Fetch's answer, once
// their readers are done (the passes of a tick's part over those PRs):
// a PR asked for after it goes to the forge. A PR fetched again since
// is the later fetch's, and stays.
func (b *Forge) Drop(prs map[int]*forge.PR) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for n, pr := range prs {
		if held, ok := b.prs[n]; !ok || held != pr {
			continue
		}
		delete(b.prs, n)
		if pr == nil {
			continue
		}
		if rest := slices.DeleteFunc(b.heads[pr.HeadSHA], func(m int) bool { return m == n }); len(rest) > 0 {
			b.heads[pr.HeadSHA] = rest
		} else {
			delete(b.heads, pr.HeadSHA)
		}
	}
}

// Fetch adds the state of numbers, fetched now, to the batch, and
// returns it.
func (b *Forge) Fetch(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	if len(numbers) == 0 {
		return nil, nil
	}
	prs, err := b.Inner.PRs(ctx, numbers)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prs == nil {
		b.prs, b.heads = map[int]*forge.PR{}, map[string][]int{}
	}
	maps.Copy(b.prs, prs)
	for n, pr := range prs {
		if pr != nil && pr.HeadSHA != "" {
			b.heads[pr.HeadSHA] = append(b.heads[pr.HeadSHA], n)
		}
	}
	return prs, err
}

func (b *Forge) cached(number int) (*forge.PR, bool) {
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
func (b *Forge) Forget(number int) { b.drop(number) }

func (b *Forge) drop(number int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.prs, number)
}

func (b *Forge) EnsurePR(ctx context.Context, req forge.NewPR) (*forge.PR, bool, error) {
	pr, created, err := b.Inner.EnsurePR(ctx, req)
	if pr != nil {
		b.drop(pr.Number)
	}
	return pr, created, err
}

func (b *Forge) PR(ctx context.Context, number int) (*forge.PR, error) {
	if pr, ok := b.cached(number); ok {
		return pr, nil
	}
	return b.Inner.PR(ctx, number)
}

func (b *Forge) PRs(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	return b.Inner.PRs(ctx, numbers)
}

// Checks answers from a batched PR whose head is sha, when the forge
// reported its checks with it.
func (b *Forge) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	b.mu.Lock()
	var found []forge.Check
	for _, n := range b.heads[sha] {
		if pr := b.prs[n]; pr != nil && pr.HeadSHA == sha && pr.Checks != nil {
			found = append([]forge.Check(nil), pr.Checks...)
			break
		}
	}
	b.mu.Unlock()
	if found != nil {
		return found, nil
	}
	return b.Inner.Checks(ctx, sha)
}

func (b *Forge) Rerun(ctx context.Context, checks []forge.Check) error {
	b.mu.Lock()
	for _, ch := range checks {
		for _, n := range b.heads[ch.SHA] {
			if pr := b.prs[n]; pr != nil && pr.HeadSHA == ch.SHA {
				delete(b.prs, n)
			}
		}
	}
	b.mu.Unlock()
	return b.Inner.Rerun(ctx, checks)
}

func (b *Forge) Log(ctx context.Context, c forge.Check, lines int) (string, error) {
	return b.Inner.Log(ctx, c, lines)
}

func (b *Forge) Merge(ctx context.Context, number int, method forge.MergeMethod, deleteBranch bool, expectHead string) error {
	b.drop(number)
	return b.Inner.Merge(ctx, number, method, deleteBranch, expectHead)
}

func (b *Forge) Close(ctx context.Context, number int, comment string) error {
	b.drop(number)
	return b.Inner.Close(ctx, number, comment)
}

func (b *Forge) Comment(ctx context.Context, number int, body string) error {
	return b.Inner.Comment(ctx, number, body)
}
