package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
)

// storeChecks are the store's rules, through issues.OpenWith on the
// backend: they hold whatever keeps the bytes.
func storeChecks() []check {
	return []check{
		{"store: create, get, update, and a stale version refused", checkStoreUpdate},
		{"store: concurrent updates lose none", checkStoreConcurrent},
		{"store: a tampered issue is refused, hides no other, and is repaired", checkStoreTampered},
		{"store: a write logged but not stored is finished", checkStoreInterrupted},
		{"store: a torn line is dropped by the next lock", checkStoreTorn},
		{"store: an adoption sets the whole log aside", checkStoreAdopt},
		{"store: a removed issue is missing", checkStoreMissing},
	}
}

func openStore(t *testing.T, s Subject, b backend.Backend) *issues.Store {
	t.Helper()
	st, err := issues.OpenWith(s.Root, b)
	require.NoError(t, err)
	st.LockTimeout = wait
	return st
}

func createIssues(t *testing.T, st *issues.Store, n int) []*issues.Issue {
	t.Helper()
	var out []*issues.Issue
	for i := range n {
		title := fmt.Sprintf("Issue %d", i+1)
		iss, err := st.Create(ctxOf(t), &issues.Issue{Title: title, Slug: issues.Slugify(title), Flow: "default", Stage: "implement.code"}, "human")
		require.NoError(t, err)
		out = append(out, iss)
	}
	return out
}

func verified(t *testing.T, st *issues.Store, id int) *issues.Report {
	t.Helper()
	rep, err := st.Verify(id)
	require.NoError(t, err)
	assert.True(t, rep.OK, "issue %d verifies: %v", id, rep.Problems)
	return rep
}

func checkStoreUpdate(t *testing.T, s Subject) {
	st := openStore(t, s, s.Backend)
	iss := createIssues(t, st, 1)[0]
	assert.Equal(t, 1, iss.ID)
	assert.Equal(t, 1, iss.Version)
	got, err := st.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "Issue 1", got.Title)

	up, err := st.Update(ctxOf(t), iss.ID, 1, func(i *issues.Issue) error { i.Title = "first"; return nil })
	require.NoError(t, err)
	assert.Equal(t, 2, up.Version)
	_, err = st.Update(ctxOf(t), iss.ID, 1, func(i *issues.Issue) error { i.Title = "stale"; return nil })
	var ce *issues.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, issues.ConflictError{ID: iss.ID, Expected: 1, Found: 2}, *ce)
	got, err = st.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "first", got.Title, "the stale update changed nothing")
	assert.Equal(t, 2, got.Version)
	assert.Equal(t, 2, verified(t, st, iss.ID).Lines)
}

func checkStoreConcurrent(t *testing.T, s Subject) {
	const writers, each = 8, 5
	stores := []*issues.Store{openStore(t, s, s.Backend)}
	if s.Again != nil {
		stores = append(stores, openStore(t, s, s.Again(t)))
	}
	iss := createIssues(t, stores[0], 1)[0]
	var wg sync.WaitGroup
	for w := range writers {
		st := stores[w%len(stores)]
		wg.Go(func() {
			for i := range each {
				for {
					cur, err := st.Get(iss.ID)
					if !assert.NoError(t, err) {
						return
					}
					_, err = st.Update(ctxOf(t), iss.ID, cur.Version, func(i2 *issues.Issue) error {
						i2.Outputs = map[string]string{"last": fmt.Sprintf("%d.%d", w, i)}
						return nil
					})
					var ce *issues.ConflictError
					if errors.As(err, &ce) {
						continue // another writer was first: read again
					}
					assert.NoError(t, err)
					break
				}
			}
		})
	}
	wg.Wait()
	got, err := stores[0].Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, 1+writers*each, got.Version, "every update made, none lost")
	rep := verified(t, stores[0], iss.ID)
	assert.Equal(t, 1+writers*each, rep.Lines, "one line per version")
}

func checkStoreTampered(t *testing.T, s Subject) {
	st := openStore(t, s, s.Backend)
	createIssues(t, st, 3)
	ctx := ctxOf(t)
	snap, err := s.Read(ctx, 2)
	require.NoError(t, err)
	var edited issues.Issue
	require.NoError(t, yaml.Unmarshal(snap.State, &edited))
	edited.Stage = "accepted"
	data, err := yaml.Marshal(&edited)
	require.NoError(t, err)
	h, err := s.Lock(ctx, 2, wait)
	require.NoError(t, err)
	_, err = s.Commit(ctx, h, backend.Write{ID: 2, State: data})
	h.Unlock()
	require.NoError(t, err)

	_, err = st.Get(2)
	var te *issues.TamperedError
	require.ErrorAs(t, err, &te)
	_, err = st.Lock(ctx, 2)
	require.ErrorAs(t, err, &te, "nothing acts on it")
	list, err := st.List()
	require.ErrorAs(t, err, &te)
	require.Len(t, list, 2, "the others are listed")
	assert.Equal(t, []int{1, 3}, []int{list[0].ID, list[1].ID})
	rep, err := st.Verify(2)
	require.NoError(t, err)
	assert.False(t, rep.OK)

	done, err := st.Repair(ctx, 2, false)
	require.NoError(t, err)
	assert.Equal(t, issues.RepairRestored, done.Action)
	got, err := st.Get(2)
	require.NoError(t, err)
	assert.Equal(t, "implement.code", got.Stage)
	verified(t, st, 2)
}

func checkStoreInterrupted(t *testing.T, s Subject) {
	st := openStore(t, s, s.Backend)
	iss := createIssues(t, st, 1)[0]
	ctx := ctxOf(t)
	h, err := s.Lock(ctx, iss.ID, wait)
	require.NoError(t, err)
	next := *iss
	next.Version, next.Title = 2, "logged, not stored"
	line, _, err := eventlog.Encode(iss.Chain, &next, eventlog.OpUpdate, time.Now().UTC().Truncate(time.Second), nil, nil)
	require.NoError(t, err)
	old, err := s.Read(ctx, iss.ID)
	require.NoError(t, err)
	// A crash between the line and the state: the line with the old state.
	_, err = s.Commit(ctx, h, backend.Write{ID: iss.ID, Line: line, State: old.State})
	h.Unlock()
	require.NoError(t, err)

	got, err := st.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Version, "the log is the truth")
	assert.True(t, verified(t, st, iss.ID).Interrupted)
	tx, err := st.Lock(ctx, iss.ID)
	require.NoError(t, err)
	tx.Unlock()
	snap, err := s.Read(ctx, iss.ID)
	require.NoError(t, err)
	var stored issues.Issue
	require.NoError(t, yaml.Unmarshal(snap.State, &stored))
	assert.Equal(t, "logged, not stored", stored.Title, "the lock finished the write")
	assert.False(t, verified(t, st, iss.ID).Interrupted)
}

func checkStoreTorn(t *testing.T, s Subject) {
	if s.Tear == nil {
		t.Skip("the backend's appends cannot be cut short")
	}
	st := openStore(t, s, s.Backend)
	iss := createIssues(t, st, 1)[0]
	s.Tear(t, iss.ID, []byte(`{"prev":"`+iss.Chain+`","issue":`))
	assert.True(t, verified(t, st, iss.ID).Torn)
	up, err := st.Update(ctxOf(t), iss.ID, 1, func(i *issues.Issue) error { i.Title = "after the tear"; return nil })
	require.NoError(t, err)
	assert.Equal(t, 2, up.Version)
	rep := verified(t, st, iss.ID)
	assert.False(t, rep.Torn)
	assert.Equal(t, 2, rep.Lines)
}

func checkStoreAdopt(t *testing.T, s Subject) {
	st := openStore(t, s, s.Backend)
	iss := createIssues(t, st, 1)[0]
	for v := 1; v <= 2; v++ {
		_, err := st.Update(ctxOf(t), iss.ID, v, func(i *issues.Issue) error { i.Title = fmt.Sprint(v); return nil })
		require.NoError(t, err)
	}
	ctx := ctxOf(t)
	// The log lost: nothing to restore, so only adopting the state helps.
	h, err := s.Lock(ctx, iss.ID, wait)
	require.NoError(t, err)
	_, err = s.SetAside(ctx, h, iss.ID, 1, "lost")
	h.Unlock()
	require.NoError(t, err)
	_, err = st.Repair(ctx, iss.ID, false)
	require.ErrorIs(t, err, issues.ErrNothingToRestore)

	done, err := st.Repair(ctx, iss.ID, true)
	require.NoError(t, err)
	assert.Equal(t, issues.RepairAdopted, done.Action)
	assert.Equal(t, 3, done.Version)
	rep := verified(t, st, iss.ID)
	assert.Equal(t, 1, rep.Lines, "a new chain")
	got, err := st.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "2", got.Title)
}

func checkStoreMissing(t *testing.T, s Subject) {
	if s.Remove == nil {
		t.Skip("the backend's test gives no way to remove an issue")
	}
	st := openStore(t, s, s.Backend)
	createIssues(t, st, 3)
	s.Remove(t, 2)
	_, err := st.Get(2)
	var me *issues.MissingError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, issues.ErrNotFound)
	missing, err := st.Missing([]int{1, 3})
	require.NoError(t, err)
	assert.Equal(t, []int{2}, missing)
	rep, err := st.Verify(2)
	require.NoError(t, err)
	assert.True(t, rep.Missing)
	assert.Equal(t, 4, createIssues(t, st, 1)[0].ID, "its id is not given again")
	verified(t, st, 1)
	verified(t, st, 4)
}
