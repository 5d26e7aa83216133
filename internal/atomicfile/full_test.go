package atomicfile_test

import (
	"errors"
	"fmt"
	"io/fs"
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
