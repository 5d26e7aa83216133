//go:build unix

package api

import "golang.org/x/sys/unix"

// openFileLimit is the most files this process may have open (the soft
// RLIMIT_NOFILE).
func openFileLimit() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 1024 // the usual soft limit where it was never raised
	}
	return int(min(uint64(lim.Cur), 1<<20))
}
