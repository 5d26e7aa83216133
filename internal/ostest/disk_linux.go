package ostest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// PageSize is the unit a tmpfs gives out: a write that fits in a file's
// last page needs no free space.
const PageSize = 4096

// Tmpfs mounts a tmpfs of size bytes over dir, holding what dir held,
// for tests of a disk that fills up or turns read-only
// (docs/RELIABILITY.md). It needs root (CI runs as root); without it the
// test is skipped, saying why. The mount goes when the test ends.
func Tmpfs(t testing.TB, dir string, size int) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs as root)")
	}
	keep := t.TempDir()
	copyTree(t, dir, keep)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	// Lazily: a process the test left (a CI runner) may still be in it.
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	copyTree(t, keep, dir)
}

func copyTree(t testing.TB, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("copy %s to %s: %v: %s", from, to, err, out)
	}
}

// Remount mounts dir's tmpfs again with mode: "ro" or "rw".
func Remount(t testing.TB, dir, mode string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+mode, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, mode, err, out)
	}
}

// Fill fills dir's disk with a file until at most free bytes are left,
// and returns the file's path: removing it gives the room back.
func Fill(t testing.TB, dir string, free int) string {
	t.Helper()
	path := filepath.Join(dir, ".filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, PageSize)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		if int(st.Bavail)*int(st.Bsize) <= free {
			return path
		}
		if _, err := f.Write(page); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}
