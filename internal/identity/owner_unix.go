//go:build unix

package identity

import (
	"fmt"
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
