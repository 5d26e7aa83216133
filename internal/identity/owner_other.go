//go:build !unix

package identity

import (
	"errors"
	"io/fs"
	"os"
)

// ownerOf: without Unix owners every process is the owner (Windows has no
// agents as other OS users here; the same-user deployment applies).
func ownerOf(path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	return os.Getuid(), nil
}

// Group is unknown without Unix groups.
func Group(path string) (int, error) {
	return 0, errors.New("file groups are only known on Unix")
}

// FileOwner is unknown without Unix owners, and so are the users that
// permission bits would name.
func FileOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
