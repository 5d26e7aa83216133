package issues_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newStore(t *testing.T) (*issues.Store, *issues.Issue) {
	t.Helper()
	s, err := issues.Open(filepath.Join(t.TempDir(), "_agenttree"))
	require.NoError(t, err)
	iss, err := s.Create(context.Background(), &issues.Issue{Title: "Add login page", Slug: "add-login-page", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(t, err)
	return s, iss
}

func TestWriteDocKeepsToPlainDocumentsOfTheIssue(t *testing.T) {
	s, iss := newStore(t)
	dir := s.Dir(iss.ID)
	tx, err := s.Lock(context.Background(), iss.ID)
	require.NoError(t, err)
	defer tx.Unlock()

	for _, name := range []string{
		"issue.yaml", "watch.yaml", "events.jsonl", // agenttree's own files
		"Issue.yaml", "EVENTS.JSONL", // the same on a case-insensitive file system
		"issue.yaml.", "watch.yaml ", // the same on Windows
		".lock", ".hidden", // dot files: locks and temp files live there
		"../escape.md", "sub/dir.md", "/etc/passwd", ".", "..", "",
	} {
		t.Run(name, func(t *testing.T) {
			err := tx.WriteDoc(name, []byte("x"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "plain file name")
		})
	}
	before, err := os.ReadFile(filepath.Join(s.HostDir(iss.ID), "issue.yaml"))
	require.NoError(t, err)
	assert.NotEqual(t, "x", string(before), "issue.yaml is untouched")
	_, err = os.Stat(filepath.Join(filepath.Dir(dir), "escape.md"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, tx.WriteDoc("ci_feedback.md", []byte("# CI failed\n")))
	got, err := os.ReadFile(filepath.Join(dir, "ci_feedback.md"))
	require.NoError(t, err)
	assert.Equal(t, "# CI failed\n", string(got))

	require.NoError(t, tx.WriteDoc("ci_feedback.md", nil), "empty content removes the document")
	_, err = os.Stat(filepath.Join(dir, "ci_feedback.md"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, tx.WriteDoc("ci_feedback.md", nil), "removing what is not there is fine")
}

func TestUpdateIsCompareAndSwap(t *testing.T) {
	s, iss := newStore(t)
	var wg sync.WaitGroup
	wins := make(chan int, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
				cur.Title = "winner"
				return nil
			})
			if err == nil {
				wins <- i
				return
			}
			var ce *issues.ConflictError
			assert.ErrorAs(t, err, &ce)
		}(i)
	}
	wg.Wait()
	close(wins)
	assert.Len(t, wins, 1)
	got, err := s.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Version)
}

// watch.yaml of the first layout (a flat map of the hooks' keys) reads as
// the hooks' part; the controller's polling state goes beside it.
func TestWatchReadsTheFirstLayout(t *testing.T) {
	s, iss := newStore(t)
	require.NoError(t, os.WriteFile(filepath.Join(s.HostDir(iss.ID), "watch.yaml"), []byte("ci.head: abc\nci.reruns: \"1\"\n"), 0o644))
	tx, err := s.Lock(context.Background(), iss.ID)
	require.NoError(t, err)
	defer tx.Unlock()
	w, err := tx.Watch()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ci.head": "abc", "ci.reruns": "1"}, w)
	require.NoError(t, tx.SetPoll(&issues.Poll{PR: 3, Head: "abc"}))
	got, err := s.ReadWatch(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "abc", got.Hooks["ci.head"], "the hooks' keys are kept in the new layout")
	assert.Equal(t, 3, got.Poll.PR)
}

// The id of an issue deleted is never given to another.
func TestIDsAreNeverReused(t *testing.T) {
	s, first := newStore(t)
	second, err := s.Create(context.Background(), &issues.Issue{Title: "Second", Slug: "second", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(s.Dir(second.ID)))
	require.NoError(t, os.RemoveAll(s.HostDir(second.ID)))
	third, err := s.Create(context.Background(), &issues.Issue{Title: "Third", Slug: "third", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(t, err)
	assert.Equal(t, first.ID+2, third.ID, "issue %d's id stays its own", second.ID)
}

// An issue whose directory was removed outside agenttree is missing, never
// silently absent: ids are never given twice and agenttree never removes
// an issue's directory. Missing lists it (the top one too, whose id only
// .last-id remembers), Get and Verify say so; an id not given yet, and
// one whose directory is being created, are not missing.
func TestMissingIssues(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	for _, title := range []string{"Two", "Three", "Four"} {
		_, err := s.Create(ctx, &issues.Issue{Title: title, Slug: "x", Flow: "default", Stage: "implement.code"}, "human")
		require.NoError(t, err)
	}
	ids, err := s.IDs()
	require.NoError(t, err)
	missing, err := s.Missing(ids)
	require.NoError(t, err)
	assert.Empty(t, missing)

	for _, id := range []int{2, 4} {
		require.NoError(t, os.RemoveAll(s.HostDir(id)))
	}
	ids, err = s.IDs()
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3}, ids)
	for _, present := range [][]int{ids, nil} {
		missing, err = s.Missing(present)
		require.NoError(t, err)
		assert.Equal(t, []int{2, 4}, missing, "present %v", present)
	}

	_, err = s.Get(2)
	require.ErrorIs(t, err, issues.ErrNotFound)
	var me *issues.MissingError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 2, me.ID)
	assert.Contains(t, err.Error(), "issue 2 is missing: its directory "+s.HostDir(2)+" was removed outside agenttree")
	_, err = s.Lock(ctx, 4)
	require.ErrorAs(t, err, &me, "nothing acts on it")

	rep, err := s.Verify(4)
	require.NoError(t, err)
	assert.False(t, rep.OK)
	assert.True(t, rep.Missing)
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0], "was removed outside agenttree")

	_, err = s.Verify(5)
	require.ErrorIs(t, err, issues.ErrNotFound, "id 5 was never given")
	assert.NotErrorAs(t, err, &me)
	_, err = s.Get(5)
	assert.NotErrorAs(t, err, &me)

	// A directory being created (no log yet) is not missing.
	require.NoError(t, os.MkdirAll(s.HostDir(5), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.HostDir(1), "..", ".last-id"), []byte("5\n"), 0o644))
	missing, err = s.Missing(ids)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 4}, missing)

	// A counter far past the last issue (.last-id edited) is listed from
	// its first missing ids, not without end.
	require.NoError(t, os.WriteFile(filepath.Join(s.HostDir(1), "..", ".last-id"), []byte("1000000000\n"), 0o644))
	missing, err = s.Missing(ids)
	require.NoError(t, err)
	assert.Len(t, missing, 1000)
	assert.Equal(t, []int{2, 4, 6, 7}, missing[:4])
}

func TestTryBeginTakesOnlyAFreeLock(t *testing.T) {
	s, iss := newStore(t)
	s.LockTimeout = 20 * time.Millisecond

	tx, got, err := s.TryBegin(iss.ID)
	require.NoError(t, err)
	require.NotNil(t, tx, "a free lock is taken")
	assert.Equal(t, iss.Version, got.Version)
	_, err = s.Lock(context.Background(), iss.ID)
	require.ErrorIs(t, err, atomicfile.ErrLocked, "it holds the lock Begin takes")

	other, seen, err := s.TryBegin(iss.ID)
	require.NoError(t, err, "busy is no error: the caller reads without the lock")
	assert.Nil(t, other)
	assert.Nil(t, seen)

	updated, err := tx.Update(iss.Version, func(cur *issues.Issue) error { cur.Title = "changed"; return nil })
	require.NoError(t, err, "a change through it is a compare-and-swap on what it read")
	tx.Unlock()
	assert.Equal(t, iss.Version+1, updated.Version)

	tx, got, err = s.TryBegin(iss.ID)
	require.NoError(t, err)
	require.NotNil(t, tx, "free again once released")
	defer tx.Unlock()
	assert.Equal(t, "changed", got.Title)

	_, _, err = s.TryBegin(iss.ID + 1)
	require.ErrorIs(t, err, issues.ErrNotFound)
}
