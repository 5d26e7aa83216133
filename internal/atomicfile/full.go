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
// full or read-only: no fault of the command's, nor one it can mend. An
// error that says part of the change was saved all the same must not
// wrap the refusal (%v, not %w), or it would be taken for nothing done.
func DiskTrouble(err error) bool {
	_, _, ok := diskErrno(err)
	return ok
}

// RefusedIn is the directory of the file whose write err says the disk
// refused: the path of the *fs.PathError or *os.LinkError that carries
// the refusal, not of another one err wraps. "" when err names none.
func RefusedIn(err error) string {
	switch e := err.(type) {
	case *fs.PathError:
		if DiskTrouble(e.Err) {
			return filepath.Dir(e.Path)
		}
	case *os.LinkError:
		if DiskTrouble(e.Err) {
			return filepath.Dir(e.New)
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return RefusedIn(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if dir := RefusedIn(e); dir != "" {
				return dir
			}
		}
	}
	return ""
}

// DiskSays is what a person does about err, a write refused by a disk
// that is full or read-only ("the disk holding DIR is full (no space left
// on device): free space on it"); "" for any other error.
func DiskSays(err error) string {
	errno, todo, ok := diskErrno(err)
	if !ok {
		return ""
	}
	where := "the disk"
	if dir := RefusedIn(err); dir != "" {
		where += " holding " + dir
	}
	return fmt.Sprintf("%s "+todo, where, errno)
}

// Explain is err, a write refused by a disk that is full or read-only,
// said as what a person does about it; any other error comes back as it
// is. The writes of this package leave the previous content whole when
// they fail, so running the command again once the disk takes writes is
// safe (docs/RELIABILITY.md).
func Explain(err error) error {
	says := DiskSays(err)
	if says == "" || errors.As(err, new(*explained)) {
		return err
	}
	// The failed call's own text names a temp file nobody needs to know
	// of: the disk, and what to do, fit where reasons are shown.
	return &explained{err: err, text: says + ", then run the command again"}
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
