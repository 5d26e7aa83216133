package issues_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/filestore"
)

// settle is the scan cache's settle time in these tests: files last
// changed longer ago than that are kept.
const settle = 50 * time.Millisecond

// scanStore is a store of four issues, their files settled: a plain one,
// one with scalar vars, an escalated one with a watch.yaml, and one with
// a list in its vars (which the cache does not keep).
func scanStore(t *testing.T) *issues.Store {
	t.Helper()
	ctx := context.Background()
	s, err := issues.Open(filepath.Join(t.TempDir(), "_agenttree"))
	require.NoError(t, err)
	issues.SetSettle(s, settle)
	for _, iss := range []*issues.Issue{
		{Title: "Plain", Slug: "plain", Flow: "default", Stage: "implement.code"},
		{Title: "With vars", Slug: "with-vars", Flow: "default", Stage: "plan", Vars: map[string]any{"needs_ui_review": true, "size": 3, "team": "web"}},
		{Title: "Escalated", Slug: "escalated", Flow: "default", Stage: "pr_ready"},
		{Title: "Nested vars", Slug: "nested-vars", Flow: "default", Stage: "plan", Vars: map[string]any{"owners": []any{"ana", "bo"}}},
	} {
		_, err := s.Create(ctx, iss, "human")
		require.NoError(t, err)
	}
	_, err = s.Update(ctx, 3, 1, func(cur *issues.Issue) error {
		cur.Escalated = &issues.Escalation{Stage: cur.Stage, Reason: "CI failed 3 times", Kind: issues.EscalatedBudget, At: time.Now().UTC().Truncate(time.Second)}
		cur.Attempts = map[string]int{"ci_failed": 3}
		return nil
	})
	require.NoError(t, err)
	setPoll(t, s, 3, &issues.Poll{PR: 7, Head: "abc", Status: "CI running", NextAt: time.Now().UTC().Truncate(time.Second)})
	time.Sleep(2 * settle) // let every file settle
	return s
}

// cached is what the scan cache holds of ids: nothing where files have
// no stamps (stamp_other.go).
func cached(ids ...int) []int {
	if runtime.GOOS != "linux" {
		return nil
	}
	return ids
}

func setPoll(t *testing.T, s *issues.Store, id int, p *issues.Poll) {
	t.Helper()
	tx, err := s.Lock(context.Background(), id)
	require.NoError(t, err)
	defer tx.Unlock()
	require.NoError(t, tx.SetPoll(p))
}

// requireScanIsGet checks that Scan lists every issue as Get and
// ReadWatch read it.
func requireScanIsGet(t *testing.T, s *issues.Store) []issues.Listed {
	t.Helper()
	listed, err := s.Scan()
	require.NoError(t, err)
	ids, err := s.IDs()
	require.NoError(t, err)
	require.Len(t, listed, len(ids))
	for i, l := range listed {
		require.Equal(t, ids[i], l.ID)
		iss, err := s.Get(l.ID)
		if err != nil {
			require.Error(t, l.Err, "issue %d", l.ID)
			continue
		}
		require.NoError(t, l.Err, "issue %d", l.ID)
		assert.Equal(t, iss, l.Issue, "issue %d", l.ID)
		w, err := s.ReadWatch(l.ID)
		require.NoError(t, err)
		assert.Equal(t, w, l.Watch, "issue %d", l.ID)
	}
	return listed
}

func TestScanReadsWhatGetReadsFromTheCache(t *testing.T) {
	s := scanStore(t)
	requireScanIsGet(t, s) // reads every issue, and keeps them
	assert.Equal(t, cached(1, 2, 3), issues.CachedIDs(s), "every settled issue but the one with a list in its vars")
	listed := requireScanIsGet(t, s) // from the cache
	assert.Equal(t, "CI running", listed[2].Watch.Poll.Status)

	list, err := s.List()
	require.NoError(t, err)
	assert.Len(t, list, 4)
}

func TestScanKeepsNothingChangedWithinTheSettleTime(t *testing.T) {
	s := scanStore(t)
	issues.SetSettle(s, time.Hour)
	requireScanIsGet(t, s)
	assert.Empty(t, issues.CachedIDs(s))
}

func TestScanReadsAroundABrokenCache(t *testing.T) {
	s := scanStore(t)
	requireScanIsGet(t, s)
	require.NoError(t, os.WriteFile(issues.ScanCachePath(s), []byte("not a cache"), 0o644))
	requireScanIsGet(t, s)
	assert.Equal(t, cached(1, 2, 3), issues.CachedIDs(s), "written again")
}

// TestScanSeesEveryChangeAfterTheCache changes an issue's files after a
// Scan kept them, and checks the next Scan reads what Get reads: a
// tampered issue is still reported, however it was changed.
func TestScanSeesEveryChangeAfterTheCache(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		change   func(t *testing.T, s *issues.Store, dir string)
		tampered bool
		check    func(t *testing.T, l issues.Listed)
	}{
		{name: "issue.yaml edited in place, same size, times put back", tampered: true,
			change: func(t *testing.T, _ *issues.Store, dir string) {
				editInPlace(t, filepath.Join(dir, "issue.yaml"), "stage: plan", "stage: done")
			}},
		{name: "a line cut off events.jsonl", tampered: true,
			change: func(t *testing.T, _ *issues.Store, dir string) {
				path := filepath.Join(dir, "events.jsonl")
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				cut := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
				require.NoError(t, os.Truncate(path, int64(cut)))
			}},
		{name: "a line appended to events.jsonl", tampered: true,
			change: func(t *testing.T, _ *issues.Store, dir string) {
				f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString(`{"prev":"","issue":2,"version":9}` + "\n")
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}},
		{name: "issue.yaml replaced by a copy of itself",
			change: func(t *testing.T, _ *issues.Store, dir string) {
				path := filepath.Join(dir, "issue.yaml")
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path+".copy", data, 0o644))
				require.NoError(t, os.Rename(path+".copy", path))
			},
			check: func(t *testing.T, l issues.Listed) { assert.Equal(t, "plan", l.Issue.Stage) }},
		{name: "moved by agenttree",
			change: func(t *testing.T, s *issues.Store, _ string) {
				_, err := s.Update(ctx, 2, 1, func(cur *issues.Issue) error { cur.Stage = "implement.code"; return nil })
				require.NoError(t, err)
			},
			check: func(t *testing.T, l issues.Listed) { assert.Equal(t, "implement.code", l.Issue.Stage) }},
		{name: "polled by the controller",
			change: func(t *testing.T, s *issues.Store, _ string) {
				setPoll(t, s, 2, &issues.Poll{PR: 9, Head: "def", Status: "waiting for review"})
			},
			check: func(t *testing.T, l issues.Listed) { assert.Equal(t, "waiting for review", l.Watch.Poll.Status) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scanStore(t)
			requireScanIsGet(t, s)
			require.Equal(t, cached(1, 2, 3), issues.CachedIDs(s))

			tc.change(t, s, s.HostDir(2))
			listed := requireScanIsGet(t, s)
			l := listed[1]
			if tc.tampered {
				var te *issues.TamperedError
				require.ErrorAs(t, l.Err, &te)
				assert.Nil(t, l.Issue)
				return
			}
			require.NoError(t, l.Err)
			tc.check(t, l)
		})
	}
}

// editInPlace replaces old with new (of the same length) in the file at
// path, in place, and puts its modification time back: only its change
// time tells.
func editInPlace(t *testing.T, path, old, new string) {
	t.Helper()
	require.Len(t, new, len(old))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Replace(data, []byte(old), []byte(new), 1), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), after.Size())
	require.Equal(t, fi.ModTime(), after.ModTime())
}

// otherBackend is the file backend under another type: a backend that
// is not files, as the store sees it.
type otherBackend struct{ *filestore.Store }

// Over a backend that is not files, Scan reads every issue from it, never
// from a scan cache of the files beside it: files a migration left behind
// hold an older state, cached and settled.
func TestScanOverAnotherBackendReadsIt(t *testing.T) {
	old := scanStore(t)
	listed, err := old.Scan()
	require.NoError(t, err)
	require.Equal(t, "plan", listed[1].Issue.Stage)
	require.Equal(t, cached(1, 2, 3), issues.CachedIDs(old))

	// The backend holds the same issues, issue 2 moved on since.
	elsewhere := filepath.Join(t.TempDir(), "_agenttree")
	require.NoError(t, os.CopyFS(elsewhere, os.DirFS(old.Root())))
	moved, err := issues.Open(elsewhere)
	require.NoError(t, err)
	_, err = moved.Update(context.Background(), 2, 1, func(cur *issues.Issue) error { cur.Stage = "implement.code"; return nil })
	require.NoError(t, err)

	s, err := issues.OpenWith(old.Root(), otherBackend{filestore.Open(elsewhere)})
	require.NoError(t, err)
	issues.SetSettle(s, settle)
	listed, err = s.Scan()
	require.NoError(t, err)
	require.Len(t, listed, 4)
	assert.Equal(t, "implement.code", listed[1].Issue.Stage, "read from the backend")
	assert.Equal(t, 2, listed[1].Issue.Version)
	assert.Equal(t, "pr_ready", listed[2].Issue.Stage)
	assert.NotNil(t, listed[2].Watch.Poll)
}

// Stamps of issues kept in another backend are unknown, whatever files
// are left under the state directory: a caller that keeps what it read
// reads them again.
func TestStampsOverAnotherBackendAreUnknown(t *testing.T) {
	old := scanStore(t)
	ids := []int{1, 2, 3}
	files := old.Stamps(ids)
	require.True(t, files[0].Files.Known(), "over files, the stamps are the files'")

	s, err := issues.OpenWith(old.Root(), otherBackend{filestore.Open(old.Root())})
	require.NoError(t, err)
	for i, st := range s.Stamps(ids) {
		assert.False(t, st.Files.Known(), "issue %d", ids[i])
		assert.False(t, s.Settled(st, time.Now().Add(time.Hour)), "issue %d", ids[i])
	}
}
