package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// diskErrno is the reason err gives for a disk that takes no writes (full,
// over quota, or read-only), and what a person does about it; ok is
// false for any other error.
func diskErrno(err error) (errno syscall.Errno, todo string, ok bool) {
	if !errors.As(err, &errno) {
		return 0, "", false
	}
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT:
		return errno, "is full (%v): free space on it", true
	case syscall.EROFS:
		return errno, "is read-only (%v): make it writable", true
	}
	return 0, "", false
}

// DiskTrouble reports whether err is a write refused by a disk that is
// full or read-only: no fault of the command's, nor one it can mend.
func DiskTrouble(err error) bool {
	_, _, ok := diskErrno(err)
	return ok
}

// Explain adds to err, a write refused by a disk that is full or
// read-only, what a person does about it; any other error comes back as
// it is. The writes of this package leave the previous content whole when
// they fail, so running the command again once the disk takes writes is
// safe (docs/RELIABILITY.md).
func Explain(err error) error {
	errno, todo, ok := diskErrno(err)
	if !ok || errors.As(err, new(*explained)) {
		return err
	}
	where := "the disk"
	var pe *fs.PathError
	if errors.As(err, &pe) {
		where += " holding " + filepath.Dir(pe.Path)
	}
	// The failed call's own text names a temp file nobody needs to know
	// of: the disk, and what to do, fit where reasons are shown.
	return &explained{err: err, text: fmt.Sprintf("%s "+todo+", then run the command again", where, errno)}
}

// explained is an error with what to do about it; errors.Is and As see
// the error it explains.
type explained struct {
	err  error
	text string
}

func (e *explained) Error() string { return e.text }
func (e *explained) Unwrap() error { return e.err }

// probeSize is what Probe writes: more than a state file (an issue.yaml
// is a few KiB), so that a disk with room for the probe alone is not
// taken to be back.
const probeSize = 64 << 10

// Probe writes a file of probeSize bytes in dir and removes it: nil when
// dir's disk takes writes again.
func Probe(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	_, err = f.Write(make([]byte, probeSize))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}
