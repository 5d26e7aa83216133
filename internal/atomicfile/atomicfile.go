// Package atomicfile writes files so that readers see the old content or
// the new, never a mix, and takes the file locks that serialize writers.
package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/proc"
)

// Write writes data to path: temp file in the same directory, fsync,
// rename, fsync the directory.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// Replace writes data to path as Write does, atomically, but without the
// fsyncs: for state that is rebuilt when lost (a poll's schedule), where
// a write per poll must cost little. A process killed at any moment still
// leaves the old content or the new; only a power loss can lose the new.
func Replace(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

func write(path string, data []byte, perm os.FileMode, durable bool) error {
	p, err := prepare(path, data, perm, durable, false)
	if err != nil {
		return err
	}
	return p.commit(durable)
}

// Pending is a file's new content written beside it, in a temp file, and
// synced: on disk, but not yet in the file's place.
type Pending struct {
	tmp, path string
	// f is the temp file, open while it is staged and not synced yet
	// (Stage): Sync syncs it through it rather than opening it again.
	f *os.File
}

// Prepare writes data to a temp file beside path and syncs it, so that
// Commit need only rename it. A writer that must have something else on
// disk before the new content takes the file's place (a log line naming
// it) syncs both at once: Prepare, the other write, then Commit.
func Prepare(path string, data []byte, perm os.FileMode) (*Pending, error) {
	return prepare(path, data, perm, true, false)
}

// Stage is Prepare without the sync: the content is written beside path
// (a disk with no room for it refuses it here), and Sync makes it
// durable later, for a writer that syncs it at the same time as
// something else.
func Stage(path string, data []byte, perm os.FileMode) (*Pending, error) {
	return prepare(path, data, perm, false, true)
}

// Sync syncs the staged content to disk; on an error it is discarded.
func (p *Pending) Sync() error {
	err := p.f.Sync()
	if cerr := p.close(); err == nil {
		err = cerr
	}
	if err != nil {
		p.Discard()
	}
	return err
}

// close closes the temp file if it is still open.
func (p *Pending) close() error {
	if p.f == nil {
		return nil
	}
	err := p.f.Close()
	p.f = nil
	return err
}

func prepare(path string, data []byte, perm os.FileMode, durable, keepOpen bool) (*Pending, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	p := &Pending{tmp: tmp.Name(), path: path}
	err = func() error {
		if _, err := tmp.Write(data); err != nil {
			return err
		}
		if err := tmp.Chmod(perm); err != nil {
			return err
		}
		if durable {
			return tmp.Sync()
		}
		return nil
	}()
	if err == nil && keepOpen {
		p.f = tmp
		return p, nil
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		p.Discard()
		return nil, err
	}
	return p, nil
}

// Commit puts the content in the file's place: rename, then fsync the
// directory, so that the rename survives a crash once Commit returns.
func (p *Pending) Commit() error { return p.commit(true) }

func (p *Pending) commit(durable bool) error {
	if err := p.close(); err != nil {
		p.Discard()
		return err
	}
	if err := os.Rename(p.tmp, p.path); err != nil {
		p.Discard()
		return err
	}
	if !durable {
		return nil
	}
	if d, err := os.Open(filepath.Dir(p.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Discard removes the temp file of a content that is not to be committed.
func (p *Pending) Discard() {
	_ = p.close()
	_ = os.Remove(p.tmp)
}

// ErrLocked is returned when another process holds a lock past the wait.
var ErrLocked = errors.New("locked by another process")

// Lock takes an exclusive lock on the file at path (created if missing),
// waiting until ctx is done or timeout passes. what names the locked thing
// in the error. Only a lock held by someone else past the wait is
// ErrLocked (busy: try again later); a lock that cannot be taken at all (a
// missing directory, no permission) is an error naming the file and why.
func Lock(ctx context.Context, path string, timeout time.Duration, what string) (unlock func(), err error) {
	wait := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	fl := newLock(path)
	ok, err := tryUntil(wait, fl, 2*time.Millisecond)
	switch {
	case ok:
		return taken(path, fl), nil
	case ctx.Err() != nil && (err == nil || errors.Is(err, ctx.Err())):
		return nil, fmt.Errorf("stopped waiting for %s, which another agenttree process%s holds (lock %s): %w: %w", what, heldBy(path), path, ErrLocked, ctx.Err())
	case err == nil || errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("%s is busy: another agenttree process%s is working on it (lock %s); try again when it is done: %w", what, heldBy(path), path, ErrLocked)
	}
	return nil, fmt.Errorf("cannot lock %s (%s): %w", what, path, err)
}

// TryLock takes the lock Lock takes if nobody holds it now, without
// waiting: ok is false when someone does. A lock that cannot be taken at
// all is an error naming the file and why, as Lock's.
func TryLock(path, what string) (unlock func(), ok bool, err error) {
	fl := newLock(path)
	if ok, err = fl.TryLock(); err != nil {
		return nil, false, fmt.Errorf("cannot lock %s (%s): %w", what, path, err)
	}
	if !ok {
		return nil, false, nil
	}
	return taken(path, fl), true, nil
}

// taken is the unlock of a lock just taken, the lock file saying who
// holds it, for the error a waiter gives up with. The lock is on the
// file, not its content.
func taken(path string, fl locker) func() {
	if w, ok := fl.(holderWriter); ok {
		_ = w.writeHolder([]byte(holder()))
	} else {
		_ = os.WriteFile(path, []byte(holder()), 0o644)
	}
	return func() { _ = fl.Unlock() }
}

// holderWriter is a lock that writes who holds it through the file it
// holds open, rather than opening the file again: the controller takes a
// lock per issue per pass, and the second open was an eighth of an
// all-due tick's CPU (bench/controller's profile).
type holderWriter interface {
	writeHolder(data []byte) error
}

// holder is what a lock file says of the process that holds it.
func holder() string {
	what := "agenttree"
	for _, a := range os.Args[1:] {
		if !strings.HasPrefix(a, "-") {
			what += " " + a // the command: next, controller, ...
			break
		}
	}
	return fmt.Sprintf("%d %s\n", os.Getpid(), what)
}

// Held reports whether another process holds the lock at path, without
// taking it (and without writing to it).
func Held(path string) bool { return held(path) }

// HeldBy names the process the lock file at path says holds it ("pid 12,
// agenttree controller"), or "" when it says nothing readable.
func HeldBy(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	pid, what, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
	if !ok || pid == "" {
		return ""
	}
	if n, err := strconv.Atoi(pid); err == nil && !proc.Alive(n) {
		// The file names the last agenttree process that held the lock;
		// the one holding it now did not write its name.
		return fmt.Sprintf("not agenttree's: the lock file names pid %s, %s, which has ended", pid, what)
	}
	return fmt.Sprintf("pid %s, %s", pid, what)
}

func heldBy(path string) string {
	if h := HeldBy(path); h != "" {
		return " (" + h + ")"
	}
	return ""
}

// locker is an exclusive lock on one file.
type locker interface {
	TryLock() (bool, error)
	Unlock() error
}

// tryUntil tries to take l every retry until ctx is done.
func tryUntil(ctx context.Context, l locker, retry time.Duration) (bool, error) {
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if ok, err := l.TryLock(); ok || err != nil {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(retry):
		}
	}
}
