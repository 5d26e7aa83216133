package storetest

import (
	"errors"
	"io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/backend"
)

// readChecks are the contracts of backend.Backend's reads and Create.
func readChecks() []check {
	return []check{
		{"nothing stored reads as nothing and locks as not stored", checkEmpty},
		{"create gives the next ids in order and stores the first write", checkCreate},
		{"a create that logs nothing gives its id back", checkCreateGivesBack},
		{"an id is never given again, even once its issue is removed", checkNeverReused},
		{"concurrent creates give distinct ids", checkConcurrentCreate},
		{"a damaged issue hides no other", checkDamagedHidesNone},
		{"gone is nothing at all stored", checkGone},
	}
}

func checkEmpty(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	ids, err := s.IDs(ctx)
	require.NoError(t, err)
	assert.Empty(t, ids)
	last, err := s.LastID(ctx)
	require.NoError(t, err)
	assert.Zero(t, last)
	gone, err := s.Gone(ctx, 1)
	require.NoError(t, err)
	assert.True(t, gone)
	snap, err := s.Read(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, backend.Snapshot{ID: 1}, snap, "no state is a nil one, not an error")
	watch, err := s.ReadWatch(ctx, 1)
	require.NoError(t, err)
	assert.Nil(t, watch)
	_, err = s.Log(1).Tail()
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = s.Log(1).Verify()
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = s.Lock(ctx, 1, wait)
	assert.ErrorIs(t, err, backend.ErrNotStored)
	_, err = s.TryLock(ctx, 1)
	assert.ErrorIs(t, err, backend.ErrNotStored)
}

func checkCreate(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	made := create(t, s, 3)
	for i, c := range made {
		assert.Equal(t, i+1, c.id)
		snap, err := s.Read(ctx, c.id)
		require.NoError(t, err)
		assert.Equal(t, backend.Snapshot{ID: c.id, State: state(c.id, 1)}, snap)
		tail, err := s.Log(c.id).Tail()
		require.NoError(t, err)
		assert.Equal(t, c.log.last(), tail.Last.Hash)
		assert.Zero(t, tail.Torn)
		assert.Equal(t, c.log.hashes, hashes(t, s, c.id))
		gone, err := s.Gone(ctx, c.id)
		require.NoError(t, err)
		assert.False(t, gone)
	}
	ids, err := s.IDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, ids)
	last, err := s.LastID(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, last)
	if s.Again != nil {
		ids, err := s.Again(t).IDs(ctx)
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, ids, "another process lists them")
	}
}

func checkCreateGivesBack(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	create(t, s, 1)
	boom := errors.New("boom")
	var asked int
	id, err := s.Create(ctx, wait, func(id int) (backend.Write, error) {
		asked = id
		return backend.Write{}, boom
	})
	assert.ErrorIs(t, err, boom)
	assert.Zero(t, id, "nothing logged: no id")
	assert.Equal(t, 2, asked)
	last, err := s.LastID(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, last, "the id is given back")
	ids, err := s.IDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, ids)
	gone, err := s.Gone(ctx, 2)
	require.NoError(t, err)
	assert.True(t, gone, "nothing is left of it")
	assert.Equal(t, 2, create(t, s, 1)[0].id, "the next create has it")
}

func checkNeverReused(t *testing.T, s Subject) {
	if s.Remove == nil {
		t.Skip("the backend's test gives no way to remove an issue")
	}
	ctx := ctxOf(t)
	create(t, s, 3)
	s.Remove(t, 3)
	s.Remove(t, 1)
	ids, err := s.IDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{2}, ids)
	last, err := s.LastID(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, last, "the last id given stays, above every id listed")
	assert.Equal(t, 4, create(t, s, 1)[0].id)
	last, err = s.LastID(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, last)
	ids, err = s.IDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 4}, ids)
}

func checkConcurrentCreate(t *testing.T, s Subject) {
	const writers, each = 8, 3
	handles := []backend.Backend{s.Backend}
	if s.Again != nil {
		handles = append(handles, s.Again(t))
	}
	var (
		mu  sync.Mutex
		got []int
		wg  sync.WaitGroup
	)
	for w := range writers {
		b := handles[w%len(handles)]
		wg.Go(func() {
			for range each {
				log := &logOf{}
				id, err := b.Create(ctxOf(t), wait, func(id int) (backend.Write, error) {
					line, _ := log.next(t, id)
					return backend.Write{ID: id, Line: line, State: state(id, 1)}, nil
				})
				assert.NoError(t, err)
				mu.Lock()
				got = append(got, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	want := make([]int, writers*each)
	for i := range want {
		want[i] = i + 1
	}
	slices.Sort(got)
	assert.Equal(t, want, got, "each id given once, none skipped")
	ids, err := s.IDs(ctxOf(t))
	require.NoError(t, err)
	assert.Equal(t, want, ids)
	last, err := s.LastID(ctxOf(t))
	require.NoError(t, err)
	assert.Equal(t, writers*each, last)
}

func checkDamagedHidesNone(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	create(t, s, 3)
	h, err := s.Lock(ctx, 2, wait)
	require.NoError(t, err)
	_, err = s.Commit(ctx, h, backend.Write{ID: 2, State: []byte("\x00 not: [yaml")})
	h.Unlock()
	require.NoError(t, err)
	ids, err := s.IDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, ids)
	for _, id := range []int{1, 3} {
		snap, err := s.Read(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, state(id, 1), snap.State)
	}
}

func checkGone(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	made := create(t, s, 2)
	commit(t, s, made[0], 2)
	for _, id := range []int{1, 2} {
		gone, err := s.Gone(ctx, id)
		require.NoError(t, err)
		assert.False(t, gone)
	}
	gone, err := s.Gone(ctx, 3)
	require.NoError(t, err)
	assert.True(t, gone, "an id not given yet")
	if s.Remove == nil {
		return
	}
	s.Remove(t, 1)
	gone, err = s.Gone(ctx, 1)
	require.NoError(t, err)
	assert.True(t, gone)
	_, err = s.Lock(ctx, 1, wait)
	assert.ErrorIs(t, err, backend.ErrNotStored)
	if s.RemoveLog != nil {
		s.RemoveLog(t, 2)
		gone, err = s.Gone(ctx, 2)
		require.NoError(t, err)
		assert.False(t, gone, "its state is still there")
	}
}

// tailOf is issue id's log's tail, which must read.
func tailOf(t *testing.T, b backend.Backend, id int) chain.Tail {
	t.Helper()
	tail, err := b.Log(id).Tail()
	require.NoError(t, err)
	return tail
}
