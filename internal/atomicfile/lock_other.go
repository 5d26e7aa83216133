//go:build !linux

package atomicfile

import "github.com/gofrs/flock"

// Outside Linux the lock is flock(2) (LockFileEx on Windows), on a file
// readable by all: open-file-description write locks are Linux's.
func newLock(path string) locker { return flock.New(path, flock.SetPermissions(0o644)) }

func held(path string) bool {
	fl := flock.New(path, flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if ok {
		_ = fl.Unlock()
	}
	return err == nil && !ok
}
