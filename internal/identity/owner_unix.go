//go:build unix

package identity

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

func ownerOf(path string) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%s: no owner known", path)
	}
	return int(st.Uid), nil
}

// Group is the group id of path.
func Group(path string) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%s: no group known", path)
	}
	return int(st.Gid), nil
}

// FileOwner is the user and group owning the file fi describes (from
// os.Stat or os.Lstat); ok is false where the system keeps no Unix owners,
// and then fi's permission bits say nothing of who may write it either.
func FileOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
