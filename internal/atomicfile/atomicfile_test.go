//go:build unix

package atomicfile_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/ostest"
)

func TestWriteReplacesWholeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "issue.yaml")
	require.NoError(t, atomicfile.Write(path, []byte("old\n"), 0o644))
	require.NoError(t, atomicfile.Write(path, []byte("new\n"), 0o600))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(data))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temp file left behind")
}

func TestWriteIntoMissingDirectoryFails(t *testing.T) {
	err := atomicfile.Write(filepath.Join(t.TempDir(), "nope", "x"), []byte("x"), 0o644)
	assert.Error(t, err)
}

func TestLockIsExclusiveAndSaysWhoIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := atomicfile.Lock(context.Background(), path, time.Second, "issue 7")
	require.NoError(t, err)

	_, err = atomicfile.Lock(context.Background(), path, 50*time.Millisecond, "issue 7")
	require.ErrorIs(t, err, atomicfile.ErrLocked)
	assert.Contains(t, err.Error(), "issue 7 is busy")

	unlock()
	unlock2, err := atomicfile.Lock(context.Background(), path, time.Second, "issue 7")
	require.NoError(t, err, "free again once released")
	unlock2()
}

func TestTryLockTakesOnlyAFreeLockAndNeverWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, ok, err := atomicfile.TryLock(path, "issue 7")
	require.NoError(t, err)
	require.True(t, ok, "a free lock is taken")
	assert.Contains(t, atomicfile.HeldBy(path), fmt.Sprintf("pid %d", os.Getpid()), "the lock file names its holder, as Lock's does")

	start := time.Now()
	_, ok, err = atomicfile.TryLock(path, "issue 7")
	require.NoError(t, err)
	assert.False(t, ok, "a held lock is not taken")
	_, err = atomicfile.Lock(context.Background(), path, 20*time.Millisecond, "issue 7")
	require.ErrorIs(t, err, atomicfile.ErrLocked, "TryLock's lock holds against Lock")
	assert.Less(t, time.Since(start), 10*time.Second)

	unlock()
	unlock2, ok, err := atomicfile.TryLock(path, "issue 7")
	require.NoError(t, err)
	require.True(t, ok, "free again once released")
	unlock2()

	_, ok, err = atomicfile.TryLock(filepath.Join(path, "missing", ".lock"), "issue 3")
	require.Error(t, err, "a lock that cannot be taken at all is an error, not busy")
	assert.False(t, ok)
	assert.Contains(t, err.Error(), "issue 3")
}

func TestLockGivesUpWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := atomicfile.Lock(context.Background(), path, 0, "x")
	require.NoError(t, err)
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = atomicfile.Lock(ctx, path, 0, "x")
	assert.ErrorIs(t, err, atomicfile.ErrLocked)
	assert.ErrorIs(t, err, context.Canceled, "the caller can tell it was stopped")
}

func TestLockThatCannotBeTakenIsNotBusy(t *testing.T) {
	dir := t.TempDir()
	// A missing directory: no amount of waiting helps.
	_, err := atomicfile.Lock(context.Background(), filepath.Join(dir, "missing", ".lock"), time.Second, "issue 3")
	require.Error(t, err)
	assert.NotErrorIs(t, err, atomicfile.ErrLocked)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), filepath.Join(dir, "missing", ".lock"))
	assert.Contains(t, err.Error(), "issue 3")
}

// lockAsEnv makes the test binary, run as another user, try one lock and
// print what Lock said.
const (
	lockAsEnv  = "ATOMICFILE_TEST_LOCK"
	flockAsEnv = "ATOMICFILE_TEST_FLOCK"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(flockAsEnv); path != "" {
		// What an agent can do to a file it may read: flock(2) it.
		f, err := os.Open(path)
		if err == nil {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		}
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("flocked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if path := os.Getenv(lockAsEnv); path != "" {
		_, err := atomicfile.Lock(context.Background(), path, time.Second, "issue 3")
		fmt.Printf("locked=%v busy=%v permission=%v: %v\n", err == nil, errors.Is(err, atomicfile.ErrLocked), errors.Is(err, fs.ErrPermission), err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestLockWithoutPermissionIsNotBusy(t *testing.T) {
	other := ostest.OtherUser(t)
	bin := ostest.Executable(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755)) // readable, not writable, by the other user
	path := filepath.Join(dir, ".lock")

	cmd := other.Command(bin)
	cmd.Env = append(os.Environ(), lockAsEnv+"="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "locked=false busy=false permission=true")
	assert.Contains(t, string(out), path)
}

func TestYAMLRecords(t *testing.T) {
	type record struct {
		Name  string `yaml:"name"`
		Count int    `yaml:"count"`
	}
	path := filepath.Join(t.TempDir(), "r.yaml")
	var got record
	assert.ErrorIs(t, atomicfile.ReadYAML(path, &got), fs.ErrNotExist)

	require.NoError(t, atomicfile.WriteYAML(path, record{Name: "ci", Count: 2}, 0o600))
	require.NoError(t, atomicfile.ReadYAML(path, &got))
	assert.Equal(t, record{Name: "ci", Count: 2}, got)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	require.NoError(t, os.WriteFile(path, []byte("name: [unclosed\n"), 0o644))
	err = atomicfile.ReadYAML(path, &got)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path, "a broken record names its file")
}

// A lock file root creates (a person's `sudo agenttree ...`) in a
// directory another user owns is that user's: it does not lock them out.
func TestLockFileRootCreatesIsTheDirectorysOwners(t *testing.T) {
	other := ostest.OtherUser(t)
	bin := ostest.Executable(t)
	dir, err := os.MkdirTemp("", "atomicfile-shared-") // t.TempDir's parent is private
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chown(dir, other.UID, other.GID))
	path := filepath.Join(dir, ".lock")
	unlock, err := atomicfile.Lock(context.Background(), path, time.Second, "issue 3")
	require.NoError(t, err)
	unlock()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.EqualValues(t, other.UID, fi.Sys().(*syscall.Stat_t).Uid)

	cmd := other.Command(bin)
	cmd.Env = append(os.Environ(), lockAsEnv+"="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "locked=true", "the directory's owner takes the lock root left")
}

// A user who may only read a lock file (an agent of another OS user, who
// reads the state) cannot take the lock, and holding flock(2) on it, which
// any reader can, stalls nobody.
func TestReadersCannotStallTheLock(t *testing.T) {
	other := ostest.OtherUser(t)
	bin := ostest.Executable(t)
	dir, err := os.MkdirTemp("", "atomicfile-shared-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	path := filepath.Join(dir, ".lock")
	unlock, err := atomicfile.Lock(context.Background(), path, time.Second, "issue 3")
	require.NoError(t, err)
	unlock()

	cmd := other.Command(bin)
	cmd.Env = append(os.Environ(), lockAsEnv+"="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "locked=false busy=false permission=true", "a reader cannot take it")

	holder := other.Command(bin)
	holder.Env = append(os.Environ(), flockAsEnv+"="+path)
	stdout, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "flocked\n", line)
	unlock, err = atomicfile.Lock(context.Background(), path, time.Second, "issue 3")
	require.NoError(t, err, "flock(2) held by a reader does not stall the lock")
	assert.True(t, atomicfile.Held(path), "Held sees the lock, asking as a reader")
	unlock()
	assert.False(t, atomicfile.Held(path))
}

func TestPrepareSyncsBesideTheFileUntilCommit(t *testing.T) {
	tests := []struct {
		name   string
		commit bool
		want   string
	}{
		{name: "commit puts the new content in place", commit: true, want: "new\n"},
		{name: "discard leaves the old content", commit: false, want: "old\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "issue.yaml")
			require.NoError(t, atomicfile.Write(path, []byte("old\n"), 0o644))
			p, err := atomicfile.Prepare(path, []byte("new\n"), 0o640)
			require.NoError(t, err)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "old\n", string(data), "nothing in place before Commit")
			if tt.commit {
				require.NoError(t, p.Commit())
			} else {
				p.Discard()
			}
			data, err = os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(data))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temp file left behind")
		})
	}
}

func TestPrepareIntoMissingDirectoryFails(t *testing.T) {
	_, err := atomicfile.Prepare(filepath.Join(t.TempDir(), "nope", "x"), []byte("x"), 0o644)
	assert.Error(t, err)
}

// A lock file that named a holder with a longer line before names only
// the process that holds it now.
func TestALockFileNamesOnlyItsHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	require.NoError(t, os.WriteFile(path, []byte("4194303 agenttree controller --interval 10s and more\n"), 0o644))
	unlock, err := atomicfile.Lock(context.Background(), path, time.Second, "issue 7")
	require.NoError(t, err)
	defer unlock()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, fmt.Sprintf(`^%d agenttree[^\n]*\n$`, os.Getpid()), string(data))
}

// BenchmarkLock takes and releases a free lock: what the controller does
// per issue per pass.
//
//	go test -run '^$' -bench Lock ./internal/atomicfile
func BenchmarkLock(b *testing.B) {
	path := filepath.Join(b.TempDir(), ".lock")
	for b.Loop() {
		unlock, err := atomicfile.Lock(context.Background(), path, time.Second, "issue 7")
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}
