package atomicfile_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/internal/atomicfile"
)

func TestExplainSaysWhatToDoAboutTheDisk(t *testing.T) {
	refused := func(errno syscall.Errno) error {
		return fmt.Errorf("issue 1: %w", &fs.PathError{Op: "write", Path: "/repo/_agenttree/host/issues/001/.issue.yaml.tmp-1", Err: errno})
	}
	other := errors.New("permission denied")
	for _, tc := range []struct {
		name    string
		err     error
		trouble bool
		says    string
	}{
		{"full", refused(syscall.ENOSPC), true, "the disk holding /repo/_agenttree/host/issues/001 is full (no space left on device): free space on it, then run the command again"},
		{"over quota", refused(syscall.EDQUOT), true, "the disk holding /repo/_agenttree/host/issues/001 is full (disk quota exceeded): free space on it, then run the command again"},
		{"read-only", refused(syscall.EROFS), true, "the disk holding /repo/_agenttree/host/issues/001 is read-only (read-only file system): make it writable, then run the command again"},
		{"no path", syscall.ENOSPC, true, "the disk is full (no space left on device): free space on it, then run the command again"},
		{"another error", other, false, "permission denied"},
		{"another errno", refused(syscall.EACCES), false, "issue 1: write /repo/_agenttree/host/issues/001/.issue.yaml.tmp-1: permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.trouble, atomicfile.DiskTrouble(tc.err))
			got := atomicfile.Explain(tc.err)
			assert.Equal(t, tc.says, got.Error())
			assert.ErrorIs(t, got, tc.err, "the error explained is still there")
			assert.Equal(t, got.Error(), atomicfile.Explain(got).Error(), "explained once")
		})
	}
	assert.NoError(t, atomicfile.Explain(nil))
}

// The directory probed and named is that of the write the disk refused,
// not of another error wrapped with it; a rename names its destination.
func TestRefusedInNamesTheDirectoryOfTheRefusal(t *testing.T) {
	full := &fs.PathError{Op: "write", Path: "/state/host/issues/002/.issue.yaml.tmp-1", Err: syscall.ENOSPC}
	for _, tc := range []struct {
		name string
		err  error
		dir  string
	}{
		{"write", full, "/state/host/issues/002"},
		{"wrapped beside another path", errors.Join(&fs.PathError{Op: "open", Path: "/tmp/rebase/x", Err: syscall.ENOENT}, fmt.Errorf("issue 2: %w", full)), "/state/host/issues/002"},
		{"rename", &os.LinkError{Op: "rename", Old: "/state/.x.tmp-1", New: "/state/host/x.yaml", Err: syscall.EROFS}, "/state/host"},
		{"no path", fmt.Errorf("sync: %w", syscall.ENOSPC), ""},
		{"not the disk's", &fs.PathError{Op: "open", Path: "/state/x", Err: syscall.EACCES}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.dir, atomicfile.RefusedIn(tc.err)) })
	}
}

// A change saved in part (its line logged) says so in its own words, and
// is not taken for nothing done: its error does not wrap the refusal.
func TestAChangeSavedInPartIsNotNothingDone(t *testing.T) {
	refused := &fs.PathError{Op: "rename", Path: "/s/host/issues/002/.issue.yaml.tmp-1", Err: syscall.EROFS}
	err := fmt.Errorf("issue 2: the change is logged, but issue.yaml was not written (%v); the next command on the issue finishes it", refused)
	assert.False(t, atomicfile.DiskTrouble(err))
	assert.Equal(t, err, atomicfile.Explain(err))
}
