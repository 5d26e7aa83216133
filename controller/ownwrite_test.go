package controller

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/filestore"
)

// ownRig is an issue waiting on CI whose poll the controller wrote at
// its last tick, the only write since the due set read it; reads counts
// the due set's reads of issue.yaml.
type ownRig struct {
	*githubRig
	e     *engine.Engine
	id    int
	reads *reads
	poll  *issues.Poll // as written
}

func newOwnRig(t *testing.T) *ownRig {
	t.Helper()
	ctx := context.Background()
	r := &ownRig{githubRig: newGitHubRigWith(t, fastWait)}
	r.id, _, _ = r.waitingOnCI(t, 1)
	r.reads = &reads{Backend: filestore.Open(r.githubRig.e.Store.Root())}
	store, err := issues.OpenWith(r.githubRig.e.Store.Root(), r.reads)
	require.NoError(t, err)
	r.e = engine.New(r.githubRig.e.Config, store, r.githubRig.e.Hooks, nil)
	r.e.Forge = r.githubRig.e.Forge
	r.c.Load = func() (*engine.Engine, error) { return r.e, nil }
	r.c.wall = settled
	// The first look finishes the stage's entry; the second only waits
	// and writes its poll.
	for range 2 {
		r.now = r.now.Add(time.Hour)
		sum, err := r.c.Tick(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, sum.Due)
		require.Equal(t, engine.StatusWaiting, sum.Results[0].Outcome.Status)
	}
	w, err := r.e.Store.ReadWatch(r.id)
	require.NoError(t, err)
	require.NotNil(t, w.Poll)
	r.poll = w.Poll
	r.reads.n.Store(0)
	return r
}

func settled() time.Time { return time.Now().Add(time.Hour) }

// look is what the due set knows of the issue's poll at a tick whose
// wall clock is wall.
func (r *ownRig) look(t *testing.T, wall func() time.Time) *issues.Poll {
	t.Helper()
	r.c.wall = wall
	ents := r.c.dueSet().Facts(r.e, []int{r.id}, r.c.wallNow())
	require.NotNil(t, ents[0])
	return ents[0].Poll
}

// The polling state a pass wrote is not read back at the next tick: the
// due set takes it from the pass while the issue's files are those it
// read but for the watch.yaml the pass wrote, settled or not.
func TestTheDueSetTakesTheControllersOwnWrite(t *testing.T) {
	r := newOwnRig(t)
	p := r.look(t, time.Now) // the files just written: not settled
	assert.Zero(t, r.reads.n.Load(), "issue.yaml read again after the controller's own write")
	assert.Equal(t, r.poll.Iteration, p.Iteration)
	assert.True(t, r.poll.NextAt.Equal(p.NextAt), "the poll the pass wrote")
	assert.Nil(t, r.c.dueSet().Kept(r.id), "not settled: not kept")
	r.look(t, time.Now)
	r.look(t, settled)
	assert.Zero(t, r.reads.n.Load(), "issue.yaml read again after the controller's own write")
	require.NotNil(t, r.c.dueSet().Kept(r.id), "settled: kept")
}

// A watch.yaml another process wrote since the controller's, or an
// issue.yaml, is read again, settled or not.
func TestTheDueSetReadsAnothersWriteAfterItsOwn(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, r *ownRig, other *issues.Store)
		iter  int
	}{
		{"watch.yaml", func(t *testing.T, r *ownRig, other *issues.Store) {
			tx, err := other.Lock(context.Background(), r.id)
			require.NoError(t, err)
			defer tx.Unlock()
			theirs := *r.poll
			theirs.Iteration = 99
			require.NoError(t, tx.SetPoll(&theirs))
		}, 99},
		{"issue.yaml", func(t *testing.T, r *ownRig, other *issues.Store) {
			iss, err := other.Get(r.id)
			require.NoError(t, err)
			_, err = other.Update(context.Background(), r.id, iss.Version, func(i *issues.Issue) error {
				i.Title = "renamed"
				return nil
			})
			require.NoError(t, err)
		}, 0},
	} {
		for _, at := range []struct {
			name string
			wall func() time.Time
		}{{"just written", time.Now}, {"settled", settled}} {
			t.Run(tt.name+", "+at.name, func(t *testing.T) {
				r := newOwnRig(t)
				other, err := issues.Open(r.e.Store.Root())
				require.NoError(t, err)
				tt.write(t, r, other)
				p := r.look(t, at.wall)
				assert.Equal(t, int64(1), r.reads.n.Load(), "the issue read again")
				if tt.iter != 0 {
					assert.Equal(t, tt.iter, p.Iteration, "another's watch.yaml")
				}
			})
		}
	}
}

// A pass keeps its polling state in its own transaction: the issue is
// read once, under the lock, not again to write its poll.
func TestAPassReadsItsIssueOnce(t *testing.T) {
	r := newOwnRig(t)
	r.look(t, settled)
	r.reads.n.Store(0)
	r.now = r.now.Add(time.Hour)
	sum, err := r.c.Tick(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, sum.Due)
	assert.Equal(t, int64(1), r.reads.n.Load(), "issue.yaml read by the pass and its poll")
	w, err := r.e.Store.ReadWatch(r.id)
	require.NoError(t, err)
	assert.Equal(t, r.poll.Iteration+1, w.Poll.Iteration, "the poll written")
}
