package storetest

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// writeChecks are the contracts of the writes under an issue's lock.
func writeChecks() []check {
	return []check{
		{"the lock is the issue's alone", checkLock},
		{"a lock waits until it is free", checkLockWaits},
		{"a commit logs the line, then the state", checkCommit},
		{"watch.yaml's bytes come back as written, unlogged", checkWatch},
		{"drop torn cuts the incomplete line only", checkDropTorn},
		{"set aside moves the lines from one on", checkSetAside},
	}
}

func checkLock(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	create(t, s, 2)
	h, err := s.Lock(ctx, 1, wait)
	require.NoError(t, err)
	_, err = s.TryLock(ctx, 1)
	assert.ErrorIs(t, err, backend.ErrBusy)
	other, err := s.TryLock(ctx, 2)
	require.NoError(t, err, "another issue's lock is free")
	other.Unlock()

	start := time.Now()
	_, err = s.Lock(ctx, 1, 300*time.Millisecond)
	assert.ErrorIs(t, err, atomicfile.ErrLocked, "a wait past its timeout is busy, as commands and the controller tell it")
	assert.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond, "it waited")
	stopped, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = s.Lock(stopped, 1, 0)
	assert.ErrorIs(t, err, atomicfile.ErrLocked)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the context's end says why")

	if s.Again != nil {
		again := s.Again(t)
		_, err = again.TryLock(ctx, 1)
		assert.ErrorIs(t, err, backend.ErrBusy, "another process finds it held")
		_, err = again.Lock(ctx, 1, 300*time.Millisecond)
		assert.ErrorIs(t, err, atomicfile.ErrLocked)
	}
	h.Unlock()
	h, err = s.TryLock(ctx, 1)
	require.NoError(t, err, "free once unlocked")
	h.Unlock()
	if s.Again != nil {
		h, err = s.Again(t).TryLock(ctx, 1)
		require.NoError(t, err, "free for another process too")
		h.Unlock()
	}
}

func checkLockWaits(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	create(t, s, 1)
	handles := []backend.Backend{s.Backend}
	if s.Again != nil {
		handles = append(handles, s.Again(t))
	}
	for _, b := range handles {
		h, err := s.Lock(ctx, 1, wait)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() {
			w, err := b.Lock(ctx, 1, 0)
			if err == nil {
				w.Unlock()
			}
			got <- err
		}()
		select {
		case err := <-got:
			t.Fatalf("a second lock was taken while the first was held (%v)", err)
		case <-time.After(300 * time.Millisecond):
		}
		h.Unlock()
		select {
		case err := <-got:
			require.NoError(t, err)
		case <-time.After(wait):
			t.Fatal("the waiting lock was not taken once the first was released")
		}
	}
}

func checkCommit(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	c := create(t, s, 1)[0]
	first := c.log.last()
	h, err := s.Lock(ctx, c.id, wait)
	require.NoError(t, err)
	defer h.Unlock()
	line, hash := c.log.next(t, c.id)
	logged, err := s.Commit(ctx, h, backend.Write{ID: c.id, Line: line, State: state(c.id, 2)})
	require.NoError(t, err)
	assert.True(t, logged)
	snap, err := s.Read(ctx, c.id)
	require.NoError(t, err)
	assert.Equal(t, state(c.id, 2), snap.State)
	tail := tailOf(t, s, c.id)
	assert.Equal(t, hash, tail.Last.Hash)
	assert.Equal(t, first, tail.Last.Prev)
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id))

	logged, err = s.Commit(ctx, h, backend.Write{ID: c.id, State: state(c.id, 3)})
	require.NoError(t, err)
	assert.False(t, logged, "no line: the state only")
	snap, err = s.Read(ctx, c.id)
	require.NoError(t, err)
	assert.Equal(t, state(c.id, 3), snap.State)
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id), "the log is as it was")
	if s.Again != nil {
		snap, err := s.Again(t).Read(ctx, c.id)
		require.NoError(t, err)
		assert.Equal(t, state(c.id, 3), snap.State, "another process reads what was written")
	}
}

func checkWatch(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	made := create(t, s, 2)
	h, err := s.Lock(ctx, 1, wait)
	require.NoError(t, err)
	defer h.Unlock()
	for _, data := range [][]byte{[]byte("poll: {}\n"), []byte("hooks:\n  a: b\n")} {
		require.NoError(t, s.WriteWatch(ctx, h, 1, data))
		got, err := s.ReadWatch(ctx, 1)
		require.NoError(t, err)
		assert.Equal(t, data, got)
	}
	got, err := s.ReadWatch(ctx, 2)
	require.NoError(t, err)
	assert.Nil(t, got, "another issue's is its own")
	assert.Equal(t, made[0].log.hashes, hashes(t, s, 1), "not logged")
	snap, err := s.Read(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, state(1, 1), snap.State, "not the state")
}

func checkDropTorn(t *testing.T, s Subject) {
	if s.Tear == nil {
		t.Skip("the backend's appends cannot be cut short")
	}
	ctx := ctxOf(t)
	c := create(t, s, 1)[0]
	commit(t, s, c, 2)
	h, err := s.Lock(ctx, c.id, wait)
	require.NoError(t, err)
	defer h.Unlock()
	require.NoError(t, s.DropTorn(ctx, h, c.id, tailOf(t, s, c.id)), "nothing torn: nothing cut")
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id))

	partial := []byte(`{"prev":"` + c.log.last() + `","issue":1,"n":`)
	s.Tear(t, c.id, partial)
	tail := tailOf(t, s, c.id)
	assert.Equal(t, c.log.last(), tail.Last.Hash, "the last complete line")
	assert.Equal(t, int64(len(partial)), tail.Torn)
	lines, err := s.Log(c.id).Verify()
	assert.ErrorIs(t, err, chain.ErrTorn)
	assert.Len(t, lines, 2)

	require.NoError(t, s.DropTorn(ctx, h, c.id, tail))
	tail = tailOf(t, s, c.id)
	assert.Equal(t, c.log.last(), tail.Last.Hash)
	assert.Zero(t, tail.Torn)
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id), "the complete lines stay")
	line, _ := c.log.next(t, c.id)
	_, err = s.Commit(ctx, h, backend.Write{ID: c.id, Line: line, State: state(c.id, 3)})
	require.NoError(t, err)
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id), "the next line follows the last complete one")
}

func checkSetAside(t *testing.T, s Subject) {
	ctx := ctxOf(t)
	c := create(t, s, 1)[0]
	for v := 2; v <= 4; v++ {
		commit(t, s, c, v)
	}
	h, err := s.Lock(ctx, c.id, wait)
	require.NoError(t, err)
	defer h.Unlock()
	const aside = "events.set-aside.jsonl"
	n, err := s.SetAside(ctx, h, c.id, 5, aside)
	require.NoError(t, err)
	assert.Zero(t, n, "past the last line: nothing to move")
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id))

	n, err = s.SetAside(ctx, h, c.id, 3, aside)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	kept := c.log.hashes[:2]
	assert.Equal(t, kept, hashes(t, s, c.id), "the lines before stay")
	assert.Equal(t, kept[1], tailOf(t, s, c.id).Last.Hash)
	c.log.hashes = kept
	line, _ := c.log.next(t, c.id)
	_, err = s.Commit(ctx, h, backend.Write{ID: c.id, Line: line, State: state(c.id, 5)})
	require.NoError(t, err)
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id), "a line follows the kept ones")

	n, err = s.SetAside(ctx, h, c.id, 1, aside)
	require.NoError(t, err)
	assert.Equal(t, 3, n, "the whole log")
	tail, err := s.Log(c.id).Tail()
	if !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
		assert.True(t, tail.Empty(), "no line is left")
	}
	c.log.hashes = nil
	line, _ = c.log.next(t, c.id)
	_, err = s.Commit(ctx, h, backend.Write{ID: c.id, Line: line, State: state(c.id, 6)})
	require.NoError(t, err)
	assert.Equal(t, c.log.hashes, hashes(t, s, c.id), "a new chain starts")

	if s.RemoveLog != nil {
		s.RemoveLog(t, c.id)
		_, err = s.SetAside(ctx, h, c.id, 1, aside)
		assert.ErrorIs(t, err, fs.ErrNotExist, "a missing log")
	}
}
