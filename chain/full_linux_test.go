package chain_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/internal/ostest"
)

// An append a full disk cuts short leaves the log as it was: its first
// bytes fit in the last page the log already has, the rest find no room.
// Without the cut, a torn line stays until the next writer drops it.
func TestAnAppendRefusedByAFullDiskLeavesTheLogAsItWas(t *testing.T) {
	dir := t.TempDir()
	ostest.Tmpfs(t, dir, 1<<20)
	log := chain.Log{Path: filepath.Join(dir, "events.jsonl")}
	var prev string
	for size(t, log.Path) < ostest.PageSize-200 {
		line, err := log.Append(prev, entry{N: 1, What: "fill most of the log's first page"})
		require.NoError(t, err)
		prev = line.Hash
	}
	before, err := os.ReadFile(log.Path)
	require.NoError(t, err)
	filler := ostest.Fill(t, dir, 0)

	big := entry{N: 2, What: string(make([]byte, 2*ostest.PageSize))}
	_, err = log.Append(prev, big)
	require.ErrorIs(t, err, syscall.ENOSPC)
	after, err := os.ReadFile(log.Path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the log as it was")

	require.NoError(t, os.Remove(filler))
	_, err = log.Append(prev, big)
	require.NoError(t, err, "the same line appended once there is room")
	lines, err := log.Verify()
	require.NoError(t, err)
	var last entry
	require.NoError(t, lines[len(lines)-1].Decode(&last))
	assert.Equal(t, 2, last.N)
}

func size(t *testing.T, path string) int {
	t.Helper()
	st, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return int(st.Size())
}

// A File's Write on a disk with no room for its new content is refused
// before its version is logged: the file reads as it was, not as changed
// outside agenttree, and the same Write succeeds once there is room.
func TestAFileWriteRefusedByAFullDiskLogsNothing(t *testing.T) {
	dir := t.TempDir()
	ostest.Tmpfs(t, dir, 1<<20)
	f := chain.FileAt(filepath.Join(dir, "1.yaml"))
	require.NoError(t, f.Write([]byte("state: pending\n"), 0o644))
	log, err := os.ReadFile(f.Log.Path)
	require.NoError(t, err)
	filler := ostest.Fill(t, dir, 0)

	require.ErrorIs(t, f.Write([]byte("state: success\n"), 0o644), syscall.ENOSPC)
	got, err := f.Read()
	require.NoError(t, err, "as it was, not changed outside agenttree")
	assert.Equal(t, "state: pending\n", string(got))
	after, err := os.ReadFile(f.Log.Path)
	require.NoError(t, err)
	assert.Equal(t, log, after, "nothing logged")

	require.NoError(t, os.Remove(filler))
	require.NoError(t, f.Write([]byte("state: success\n"), 0o644))
	got, err = f.Read()
	require.NoError(t, err)
	assert.Equal(t, "state: success\n", string(got))
}
