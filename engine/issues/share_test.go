package issues_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pass under the lock copies what the due set shared rather than parse
// the same bytes again; what it gets is its own, and a change made by
// anyone since is read, not the copy.
func TestAReadUnderTheLockCopiesWhatWasShared(t *testing.T) {
	ctx := context.Background()
	s, iss := newStore(t)
	_, err := s.Update(ctx, iss.ID, iss.Version, func(i *issues.Issue) error {
		i.Labels, i.Vars = []string{"a"}, map[string]any{"list": []any{"x", map[string]any{"k": "v"}}}
		return nil
	})
	require.NoError(t, err)

	shared, err := s.Share(iss.ID)
	require.NoError(t, err)
	want, err := s.Get(iss.ID)
	require.NoError(t, err)
	require.Equal(t, want, shared)

	tx, got, err := s.Begin(ctx, iss.ID)
	require.NoError(t, err)
	require.Equal(t, shared, got)
	require.NotSame(t, shared, got)
	got.Labels[0] = "changed"
	got.Vars["list"].([]any)[1].(map[string]any)["k"] = "changed"
	changed, err := tx.Update(got.Version, func(i *issues.Issue) error { i.Title = "by the pass"; return nil })
	require.NoError(t, err)
	tx.Unlock()
	assert.Equal(t, "by the pass", changed.Title)
	assert.Equal(t, want, shared, "what the due set holds is never changed by a pass")

	again, err := s.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "by the pass", again.Title, "the bytes changed: read, not copied")
	assert.Equal(t, []string{"a"}, again.Labels, "the pass's change of its copy before Update is not the store's")
}

// How much a read under the lock allocates with the due set's parse kept
// and without: a copy is a fraction of a parse. Allocations are counted,
// not timed.
func TestAReadUnderTheLockOfASharedIssueParsesNothing(t *testing.T) {
	ctx := context.Background()
	s, iss := newStore(t)
	for i := range 8 {
		cur, err := s.Get(iss.ID)
		require.NoError(t, err)
		_, err = s.Update(ctx, iss.ID, cur.Version, func(x *issues.Issue) error {
			x.History = append(x.History, issues.HistoryEntry{From: "a", To: "b", Kind: "advance", Actor: "controller", Reason: "a reason of some length", At: time.Unix(int64(i), 0).UTC()})
			return nil
		})
		require.NoError(t, err)
	}
	begin := func() {
		tx, _, err := s.Begin(ctx, iss.ID)
		require.NoError(t, err)
		_, err = tx.Watch()
		require.NoError(t, err)
		tx.Unlock()
	}
	tx, err := s.Lock(ctx, iss.ID)
	require.NoError(t, err)
	require.NoError(t, tx.UpdateWatch(map[string]string{"resumed_at": "2026-11-29T12:00:00Z", "ci": "pending"}))
	tx.Unlock()

	parsing := testing.AllocsPerRun(20, begin)
	_, err = s.Share(iss.ID)
	require.NoError(t, err)
	_, err = s.ShareWatch(iss.ID)
	require.NoError(t, err)
	copying := testing.AllocsPerRun(20, begin)
	t.Logf("allocations of a read under the lock: %.0f parsing, %.0f copying", parsing, copying)
	assert.Less(t, copying, parsing/2)
}

// The watch state the controller writes is what the next read under the
// lock copies; written by another, it is read again.
func TestTheWatchStateWrittenIsCopiedNotParsed(t *testing.T) {
	ctx := context.Background()
	s, iss := newStore(t)
	tx, err := s.Lock(ctx, iss.ID)
	require.NoError(t, err)
	p := &issues.Poll{PR: 7, Head: "abc", Handled: []string{"c1"}, FixAttempts: map[string]int{"ci": 1}}
	require.NoError(t, tx.SetPoll(p))
	tx.Unlock()

	tx, err = s.Lock(ctx, iss.ID)
	require.NoError(t, err)
	got, err := tx.Poll()
	require.NoError(t, err)
	require.Equal(t, p, got)
	require.NotSame(t, p, got)
	got.Handled[0], got.FixAttempts["ci"] = "changed", 9
	assert.Equal(t, []string{"c1"}, p.Handled)
	tx.Unlock()

	w, err := s.ShareWatch(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, w.Poll.Handled, "a copy changed and not written is nobody else's")

	// Another process (a store of its own) writes: its bytes are read.
	other, err := issues.Open(s.Root())
	require.NoError(t, err)
	tx, err = other.Lock(ctx, iss.ID)
	require.NoError(t, err)
	require.NoError(t, tx.UpdateWatch(map[string]string{"k": "v"}))
	tx.Unlock()
	tx, err = s.Lock(ctx, iss.ID)
	require.NoError(t, err)
	defer tx.Unlock()
	hooks, err := tx.Watch()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "v"}, hooks)
}
