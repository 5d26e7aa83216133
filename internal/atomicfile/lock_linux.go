package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ofdLock is a write lock on the whole file (fcntl F_OFD_SETLK, F_WRLCK),
// held by the open file and released when it closes. A write lock needs
// the file open for writing: a process that may only read the lock file
// (an agent of another OS user, who can read the state) cannot take it
// and so cannot stall the host, as it could with flock(2), which any
// reader may take.
type ofdLock struct {
	path string
	f    *os.File
}

func newLock(path string) locker { return &ofdLock{path: path} }

func (l *ofdLock) TryLock() (bool, error) {
	f, err := openLockFile(l.path)
	if err != nil {
		return false, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	err = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		f.Close()
		return false, nil
	}
	if err != nil {
		f.Close()
		return false, &os.PathError{Op: "lock", Path: l.path, Err: err}
	}
	l.f = f
	return true, nil
}

func (l *ofdLock) Unlock() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close() // releases the lock
	l.f = nil
	return err
}

// writeHolder replaces the lock file's content with data, through the
// open file that holds the lock.
func (l *ofdLock) writeHolder(data []byte) error {
	if _, err := l.f.WriteAt(data, 0); err != nil {
		return err
	}
	return l.f.Truncate(int64(len(data)))
}

// held reports whether a write lock is on the file at path, without
// taking it: F_OFD_GETLK needs only reading, so anyone who can read the
// state can ask.
func held(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}

// openLockFile opens (creating) the lock file for writing, readable by
// all. One created by root in a directory someone else owns (a person's
// `sudo agenttree ...`) is given to that owner: a root-owned lock file
// would lock the owner out for good.
func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Stat(filepath.Dir(path)); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
				_ = f.Chown(int(st.Uid), int(st.Gid))
			}
		}
	}
	return f, nil
}
