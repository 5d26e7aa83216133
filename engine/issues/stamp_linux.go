package issues

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// stamper stats issues' files relative to the issues directory, opened
// once: the kernel walks two names per file, not the whole path.
type stamper struct {
	s   *Store
	dir *os.File // nil: nothing can be stat'ed
}

func (s *Store) stamper() stamper {
	dir, err := os.Open(s.layout.HostIssues())
	if err != nil {
		return stamper{s: s}
	}
	return stamper{s: s, dir: dir}
}

func (st stamper) close() {
	if st.dir != nil {
		st.dir.Close()
	}
}

// stamp stats the file at rel, a path inside the issues directory; ok is
// false when it cannot be.
func (st stamper) stamp(rel string) (stamp, bool) {
	if st.dir == nil {
		return stamp{}, false
	}
	var sys unix.Stat_t
	err := unix.Fstatat(int(st.dir.Fd()), rel, &sys, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return stamp{}, true
	case err != nil:
		return stamp{}, false
	}
	return stamp{Ino: sys.Ino, Size: sys.Size, Mtime: sys.Mtim.Nano(), Ctime: sys.Ctim.Nano()}, true
}
