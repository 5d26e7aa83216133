package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
)

// inFlight is a forge whose PRs requests take a while, counting how many
// are in flight at once.
type inFlight struct {
	forge.Forge

	mu       sync.Mutex
	now, max int
	calls    int
}

func (f *inFlight) Unwrap() (forge.Forge, error) { return f.Forge, nil }

func (f *inFlight) PRs(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	f.mu.Lock()
	f.now++
	f.calls++
	f.max = max(f.max, f.now)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
	}()
	// A round trip long enough for the batches after it to start.
	time.Sleep(200 * time.Millisecond)
	return f.Forge.PRs(ctx, numbers)
}

// A tick fetches its batches of PRs a few at a time, never more than
// fetchAhead (GitHub's secondary limits), not one after another; every
// issue still gets its PR's state.
func TestATickFetchesItsBatchesAFewAtATime(t *testing.T) {
	r := newGitHubRig(t)
	counting := &inFlight{Forge: r.e.Forge}
	r.e.Forge = counting
	const n = 5*batchSize + 1 // six batches
	for i := range n {
		r.waitingOnCI(t, i+1)
	}
	sum := r.tick(t)
	require.Equal(t, n, sum.Due)
	assert.Zero(t, sum.Failed)
	for _, res := range sum.Results {
		assert.Equal(t, "waiting", string(res.Status), "issue %d: %v", res.Issue, res.Reasons)
	}
	assert.Equal(t, 6, counting.calls)
	assert.GreaterOrEqual(t, counting.max, 2, "batches fetched at once")
	assert.LessOrEqual(t, counting.max, fetchAhead)
	assert.Equal(t, 6, r.srv.Queries("PRStates"), "no pass asked the forge past its batch: %v", r.srv.Counts())
}

// asked is a forge that counts the PRs and checks asked of it one by one.
type asked struct {
	forge.Forge

	mu         sync.Mutex
	prs, heads int
}

func (f *asked) Unwrap() (forge.Forge, error) { return f.Forge, nil }

func (f *asked) PR(ctx context.Context, number int) (*forge.PR, error) {
	f.mu.Lock()
	f.prs++
	f.mu.Unlock()
	return f.Forge.PR(ctx, number)
}

func (f *asked) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	f.mu.Lock()
	f.heads++
	f.mu.Unlock()
	return f.Forge.Checks(ctx, sha)
}

// Once a tick is over its batch holds nothing: a PR or a head's checks
// asked for after it (by the next tick's agents, say) come from the
// forge, not as the tick saw them. Before, the batch held every PR the
// tick fetched until the next tick's fetch.
func TestATickLeavesNothingInItsBatch(t *testing.T) {
	r := newGitHubRig(t)
	counting := &asked{Forge: r.e.Forge}
	r.e.Forge = counting
	const n = batchSize + 1 // two parts
	var heads []string
	for i := range n {
		_, head, _ := r.waitingOnCI(t, i+1)
		heads = append(heads, head)
	}
	sum := r.tick(t)
	require.Equal(t, n, sum.Due)
	require.Zero(t, sum.Failed)
	require.Zero(t, counting.prs+counting.heads, "the passes read the batch")
	ctx := context.Background()
	for _, id := range []int{1, n} {
		pr, err := r.e.Forge.PR(ctx, r.pr(t, id))
		require.NoError(t, err)
		assert.Equal(t, r.pr(t, id), pr.Number)
		_, err = r.e.Forge.Checks(ctx, heads[id-1])
		require.NoError(t, err)
	}
	assert.Equal(t, 2, counting.prs)
	assert.Equal(t, 2, counting.heads)
}

// runParts drops each part's batch once, when the last of its passes is
// over and before the next pass may start; the passes of a tick whose
// context is done are skipped, and their parts' batches dropped all the
// same.
func TestAPartsBatchIsDroppedOnceItsPassesAreOver(t *testing.T) {
	sizes := []int{3, 1, 4, 2}
	for _, tt := range []struct {
		name      string
		limit     int
		cancelled bool
	}{
		{"one pass at a time", 1, false},
		{"two at a time", 2, false},
		{"more at a time than a part holds", 8, false},
		{"the tick stopped", 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var parts []part
			var due []dueIssue
			partOf := map[int]int{} // by issue id
			for k, size := range sizes {
				start := len(due)
				for range size {
					id := len(due) + 1
					due = append(due, dueIssue{iss: &issues.Issue{ID: id}})
					partOf[id] = k
				}
				parts = append(parts, part{start: start, due: due[start:]})
			}
			var mu sync.Mutex
			over := make([]int, len(sizes))    // passes over, by part
			dropped := make([]int, len(sizes)) // drops, by part
			var failures []string
			fetched := make([]chan *prBatch, len(parts))
			for k := range parts {
				fetched[k] = make(chan *prBatch, 1)
				fetched[k] <- &prBatch{drop: func() {
					mu.Lock()
					defer mu.Unlock()
					dropped[k]++
					if want := sizes[k]; over[k] != want && !tt.cancelled {
						failures = append(failures, fmt.Sprintf("part %d dropped with %d of its %d passes over", k, over[k], want))
					}
				}}
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancelled {
				cancel()
			}
			defer cancel()
			passes := runParts(ctx, parts, fetched, tt.limit, func(d dueIssue, _ *prBatch) pass {
				k := partOf[d.iss.ID]
				mu.Lock()
				if tt.limit == 1 && k > 0 && dropped[k-1] == 0 {
					failures = append(failures, fmt.Sprintf("a pass of part %d began before part %d was dropped", k, k-1))
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				over[k]++
				mu.Unlock()
				return pass{again: time.Duration(d.iss.ID)}
			})
			assert.Empty(t, failures)
			assert.Equal(t, []int{1, 1, 1, 1}, dropped)
			require.Len(t, passes, len(due))
			for i, p := range passes {
				if tt.cancelled {
					assert.True(t, p.skipped)
				} else {
					assert.Equal(t, time.Duration(i+1), p.again, "pass %d in its place", i)
				}
			}
		})
	}
}
