package scancache

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Stamper stats issues' files relative to the issues directory, opened
// once: the kernel walks two names per file, not the whole path.
type Stamper struct {
	dir *os.File // nil: nothing can be stat'ed
}

// OpenStamper opens the issues directory dir to stat its issues' files;
// the caller closes the Stamper.
func OpenStamper(dir string) Stamper {
	d, err := os.Open(dir)
	if err != nil {
		return Stamper{}
	}
	return Stamper{dir: d}
}

// Close closes the issues directory.
func (st Stamper) Close() {
	if st.dir != nil {
		st.dir.Close()
	}
}

// stamp stats the file at rel, a path inside the issues directory; ok is
// false when it cannot be.
func (st Stamper) stamp(rel string) (Stamp, bool) {
	if st.dir == nil {
		return Stamp{}, false
	}
	var sys unix.Stat_t
	err := unix.Fstatat(int(st.dir.Fd()), rel, &sys, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return Stamp{}, true
	case err != nil:
		return Stamp{}, false
	}
	return Stamp{Ino: sys.Ino, Size: sys.Size, Mtime: sys.Mtim.Nano(), Ctime: sys.Ctim.Nano()}, true
}
