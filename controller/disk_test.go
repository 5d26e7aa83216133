package controller

import (
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A write refused in a directory that is gone by the next tick (removed
// to free space): the probe's failure there is not the disk's, and the
// controller goes on rather than wait for good on a disk with room.
func TestTheDiskWatchGoesOnWhenTheRefusedDirectoryIsGone(t *testing.T) {
	root := t.TempDir()
	gone := filepath.Join(root, "host", "issues", "007")
	var w diskWatch
	assert.True(t, w.refusedBy(fmt.Errorf("issue 7: %w", &fs.PathError{Op: "write", Path: filepath.Join(gone, ".issue.yaml.tmp-1"), Err: syscall.ENOSPC})))
	var log bytes.Buffer
	assert.False(t, w.blocked(root, slog.New(slog.NewTextHandler(&log, nil))), "blocked on a disk with room")
	assert.Contains(t, log.String(), "the disk takes writes again")
	assert.False(t, w.blocked(root, slog.New(slog.NewTextHandler(&log, nil))))
	assert.False(t, w.refusedBy(fmt.Errorf("issue 7: %w", syscall.EACCES)), "not the disk's")
}
