package dueset_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/dueset"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// The watch names an issue for a change of any file in its directory or
// its outbox, made before or after the watch began, and for its removal;
// the store's own files name none.
func TestTheWatchNamesTheIssueWhoseFilesChanged(t *testing.T) {
	l := statedir.Layout{Root: t.TempDir()}
	write := func(path string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte("x\n"), 0o644))
	}
	write(filepath.Join(l.Issue(1), "issue.yaml"))
	write(filepath.Join(l.Issue(1), "outbox", "m1.yaml"))
	w, err := dueset.WatchIssues(l)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })

	// named waits until the watch has named want; a write makes several
	// notifications, read one by one, so the issues of the step before
	// may be named again meanwhile, but no other.
	named := func(want int, before ...int) {
		t.Helper()
		var got []int
		lost := false
		require.Eventually(t, func() bool {
			ids, all := w.Take()
			lost = lost || all
			got = append(got, ids...)
			return slices.Contains(got, want)
		}, 30*time.Second, 10*time.Millisecond, "issue %d not named", want)
		for _, id := range got {
			assert.Contains(t, append(before, want), id, "issue %d named for a change of issue %d's files", id, want)
		}
		require.False(t, lost, "the watch lost changes: %v", w.Err())
	}
	write(filepath.Join(l.Issue(1), "watch.yaml"))
	named(1)
	write(filepath.Join(l.Issue(1), "outbox", "m2.yaml"))
	named(1, 1)

	// An issue made after the watch began, and its outbox made later.
	write(filepath.Join(l.Issue(2), "issue.yaml"))
	named(2, 1)
	write(filepath.Join(l.Issue(2), "outbox", "m1.yaml"))
	named(2, 2)
	write(filepath.Join(l.Issue(2), "outbox", "m2.yaml"))
	named(2, 2)

	require.NoError(t, os.RemoveAll(l.Issue(1)))
	named(1, 2)
	// The store's own files name no issue: notifications are read in
	// order, so once the next change is named the file's was read.
	write(filepath.Join(l.HostIssues(), ".last-id"))
	write(filepath.Join(l.Issue(2), "watch.yaml"))
	named(2, 1)

	// A file replaced by a rename, as atomicfile writes the state.
	require.NoError(t, atomicfile.Replace(filepath.Join(l.Issue(2), "issue.yaml"), []byte("y\n"), 0o644))
	named(2, 2)
	// An issue's directory removed and made again is watched again.
	require.NoError(t, os.RemoveAll(l.Issue(2)))
	named(2, 2)
	write(filepath.Join(l.Issue(2), "issue.yaml"))
	named(2, 2)
	write(filepath.Join(l.Issue(2), "watch.yaml"))
	named(2, 2)
	assert.NoError(t, w.Err())

	// The issues' directory itself removed: the watch says so, and every
	// Take says all from then on.
	require.NoError(t, os.RemoveAll(l.HostIssues()))
	require.Eventually(t, func() bool { return w.Err() != nil }, 30*time.Second, 10*time.Millisecond)
	_, all := w.Take()
	assert.True(t, all)
}
