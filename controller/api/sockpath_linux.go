package api

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxSocketPath is the longest path a Unix socket address holds
// (sun_path, 108 bytes with its NUL).
const maxSocketPath = 107

// reachable returns a path by which path can be bound or dialled: path
// itself when it is short enough, else the same file through an open
// descriptor of its directory (/proc/self/fd/N/NAME), as a repository deep
// in the file system has a socket path longer than a socket address holds.
// release closes that descriptor, once the socket is bound or dialled
// (a listener's, once it is closed).
func reachable(path string) (short string, release func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	short = fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path))
	if len(short) > maxSocketPath {
		dir.Close()
		return "", nil, fmt.Errorf("socket name %s is too long", filepath.Base(path))
	}
	return short, func() { dir.Close() }, nil
}
