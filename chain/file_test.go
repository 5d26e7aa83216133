package chain_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
)

func TestFileReadsOnlyWhatWasWrittenThroughItsLog(t *testing.T) {
	dir := t.TempDir()
	f := chain.FileAt(filepath.Join(dir, "1.yaml"))
	assert.Equal(t, filepath.Join(dir, "1.chain.jsonl"), f.Log.Path)
	_, err := f.Read()
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, f.Write([]byte("state: pending\n"), 0o644))
	require.NoError(t, f.Write([]byte("state: failure\n"), 0o644))
	got, err := f.Read()
	require.NoError(t, err)
	assert.Equal(t, "state: failure\n", string(got))

	for _, tt := range []struct {
		name   string
		attack func(t *testing.T)
		why    string
	}{
		{name: "content edited", why: "its content is not the last version", attack: func(t *testing.T) {
			require.NoError(t, os.WriteFile(f.Path, []byte("state: success\n"), 0o644))
		}},
		{name: "removed", why: "it was removed", attack: func(t *testing.T) {
			require.NoError(t, os.Remove(f.Path))
		}},
		{name: "log's last line edited", why: "the last line of its log", attack: func(t *testing.T) {
			data, err := os.ReadFile(f.Log.Path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(f.Log.Path, []byte(strings.Replace(string(data), "failure", "success", 1)), 0o644))
			require.NoError(t, os.WriteFile(f.Path, []byte("state: success\n"), 0o644))
		}},
		{name: "log removed", why: "it has no log", attack: func(t *testing.T) {
			require.NoError(t, os.Remove(f.Log.Path))
		}},
		{name: "another file's log copied beside it", why: "its log is the log of 2.yaml", attack: func(t *testing.T) {
			other := chain.FileAt(filepath.Join(dir, "2.yaml"))
			require.NoError(t, other.Write([]byte("state: success\n"), 0o644))
			require.NoError(t, os.WriteFile(f.Path, []byte("state: success\n"), 0o644))
			data, err := os.ReadFile(other.Log.Path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(f.Log.Path, data, 0o644))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			saved, err := os.ReadFile(f.Log.Path)
			require.NoError(t, err)
			t.Cleanup(func() {
				require.NoError(t, os.WriteFile(f.Log.Path, saved, 0o644))
				require.NoError(t, os.WriteFile(f.Path, []byte("state: failure\n"), 0o644))
			})
			tt.attack(t)
			_, err = f.Read()
			var changed *chain.ChangedError
			require.ErrorAs(t, err, &changed)
			assert.Contains(t, err.Error(), tt.why)
			assert.Equal(t, f.Log.Path, changed.Log)
		})
	}
}

// A crash between the log's line and the file's replacement leaves the
// log ahead: Read gives the logged version, the next Write goes on.
func TestFileCrashAfterTheLogIsNoChange(t *testing.T) {
	dir := t.TempDir()
	f := chain.FileAt(filepath.Join(dir, "abc.yaml"))
	require.NoError(t, f.Write([]byte("v1\n"), 0o644))
	require.NoError(t, f.Write([]byte("v2\n"), 0o644))
	require.NoError(t, os.WriteFile(f.Path, []byte("v1\n"), 0o644)) // the rename never happened
	got, err := f.Read()
	require.NoError(t, err)
	assert.Equal(t, "v2\n", string(got))

	require.NoError(t, os.Remove(f.Path))
	_, err = f.Read()
	require.Error(t, err, "a file removed after it was written is not a crash")

	g := chain.FileAt(filepath.Join(dir, "new.yaml"))
	require.NoError(t, g.Write([]byte("first\n"), 0o644))
	require.NoError(t, os.Remove(g.Path)) // created in the log, never on disk
	got, err = g.Read()
	require.NoError(t, err)
	assert.Equal(t, "first\n", string(got))
	require.NoError(t, g.Write([]byte("second\n"), 0o644))
	got, err = g.Read()
	require.NoError(t, err)
	assert.Equal(t, "second\n", string(got))
	lines, err := g.Log.Verify()
	require.NoError(t, err)
	assert.Len(t, lines, 2)
}

// Two crashes in a row, each between a Write's line and the file's
// replacement (a controller killed twice while writing a local CI
// record, in cmd/agenttree TestCrashStorm): the second Write finishes the
// first's version on disk before it logs its own, so the file is one
// version behind the log, which Read takes for a crash, never two, which
// it would take for a change made outside agenttree.
func TestFileTwoCrashesInARowAreNoChange(t *testing.T) {
	for _, tt := range []struct {
		name   string
		before []string
	}{
		{name: "a new file"},
		{name: "a file written before", before: []string{"v1\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := chain.FileAt(filepath.Join(t.TempDir(), "abc.yaml"))
			for _, v := range tt.before {
				require.NoError(t, f.Write([]byte(v), 0o644))
			}
			chain.CrashAfterLog(true)
			t.Cleanup(func() { chain.CrashAfterLog(false) })
			require.ErrorIs(t, f.Write([]byte("v2\n"), 0o644), chain.ErrCrash)
			require.ErrorIs(t, f.Write([]byte("v3\n"), 0o644), chain.ErrCrash)
			got, err := f.Read()
			require.NoError(t, err, "two crashes read as a change made outside agenttree")
			assert.Equal(t, "v3\n", string(got))

			chain.CrashAfterLog(false)
			require.NoError(t, f.Write([]byte("v4\n"), 0o644))
			got, err = f.Read()
			require.NoError(t, err)
			assert.Equal(t, "v4\n", string(got))
			lines, err := f.Log.Verify()
			require.NoError(t, err)
			assert.Len(t, lines, len(tt.before)+3)
		})
	}
}

// Records from before logs get their logs from Adopt (a migration's);
// any other time, a record without its log is one written by hand, and
// only Adopt, never a read, gives it one.
func TestRecordsWithoutALogAreRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.yaml"), []byte("old\n"), 0o644))
	r := chain.Records{Dir: dir}
	require.NoError(t, r.Adopt())
	got, err := r.Read("old.yaml")
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got))
	require.FileExists(t, filepath.Join(dir, "old.chain.jsonl"))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "forged.yaml"), []byte("state: success\n"), 0o644))
	for range 2 {
		got, err = r.Read("forged.yaml")
		require.ErrorIs(t, err, chain.ErrUnlogged)
		assert.Nil(t, got, "nothing of it is returned")
		var changed *chain.ChangedError
		require.ErrorAs(t, err, &changed)
		assert.NoFileExists(t, filepath.Join(dir, "forged.chain.jsonl"))
	}

	require.NoError(t, r.Write("new.yaml", []byte("new\n")))
	got, err = r.Read("new.yaml")
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	_, err = r.Read("none.yaml")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Two processes adopting a file, and one writing it, at once make one
// log that verifies.
func TestAdoptBesideWritersMakesOneLog(t *testing.T) {
	dir := t.TempDir()
	f := chain.FileAt(filepath.Join(dir, "1.yaml"))
	require.NoError(t, os.WriteFile(f.Path, []byte("old\n"), 0o644))
	done := make(chan error, 3)
	go func() { done <- f.Adopt() }()
	go func() { done <- f.Adopt() }()
	go func() { done <- f.Write([]byte("new\n"), 0o644) }()
	for range 3 {
		require.NoError(t, <-done)
	}
	lines, err := f.Log.Verify()
	require.NoError(t, err)
	assert.NotEmpty(t, lines)
	got, err := f.Read()
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	st, err := os.Stat(f.Log.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
}
