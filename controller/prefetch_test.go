package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
