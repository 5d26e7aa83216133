package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// held is an issue's file lock.
type held func()

func (h held) Unlock() { h() }

func (s *Store) lockPath(id int) string { return filepath.Join(s.layout.Issue(id), ".lock") }

// Lock takes issue id's file lock (.lock in its directory).
func (s *Store) Lock(ctx context.Context, id int, timeout time.Duration) (backend.Held, error) {
	if err := s.stored(id); err != nil {
		return nil, err
	}
	unlock, err := atomicfile.Lock(ctx, s.lockPath(id), timeout, fmt.Sprintf("issue %d", id))
	if err != nil {
		return nil, err
	}
	return held(unlock), nil
}

// TryLock takes issue id's file lock if nobody holds it; one this process
// may not open (fs.ErrPermission) is busy too.
func (s *Store) TryLock(_ context.Context, id int) (backend.Held, error) {
	if err := s.stored(id); err != nil {
		return nil, err
	}
	unlock, ok, err := atomicfile.TryLock(s.lockPath(id), fmt.Sprintf("issue %d", id))
	switch {
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%w: %w", backend.ErrBusy, err)
	case err != nil:
		return nil, err
	case !ok:
		return nil, backend.ErrBusy
	}
	return held(unlock), nil
}

// stored is ErrNotStored when issue id has neither an issue.yaml nor a
// log.
func (s *Store) stored(id int) error {
	f := s.issue(id)
	if _, err := os.Stat(f.state); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if _, lerr := os.Stat(f.log.Path); lerr != nil {
			return backend.ErrNotStored
		}
	}
	return nil
}

// Commit appends w's line, synced, then replaces issue.yaml.
func (s *Store) Commit(_ context.Context, _ backend.Held, w backend.Write) (bool, error) {
	return s.commit(w)
}

func (s *Store) commit(w backend.Write) (bool, error) {
	f := s.issue(w.ID)
	if w.Line == nil {
		return false, atomicfile.Write(f.state, w.State, 0o644)
	}
	// issue.yaml's new content is written beside it before the line is
	// logged: a disk with no room for it (docs/RELIABILITY.md) refuses
	// the change before anything is logged, so that a line in the log is
	// always a change made, whoever reads it without the lock. The two
	// are then synced at the same time: each must be on disk before the
	// rename puts the content in place, and neither needs the other
	// first. One fsync's wait instead of two.
	pending, err := atomicfile.Stage(f.state, w.State, 0o644)
	if err != nil {
		return false, err
	}
	synced := make(chan error, 1)
	go func() { synced <- pending.Sync() }()
	if err := f.log.AppendEncoded(w.Line); err != nil {
		<-synced
		pending.Discard()
		return false, err
	}
	if err := <-synced; err != nil {
		return true, err // logged: the next Lock writes issue.yaml
	}
	return true, pending.Commit()
}

// Create allocates the next id under the issue list's lock, makes its
// directory and writes its first line and issue.yaml under its lock.
func (s *Store) Create(ctx context.Context, timeout time.Duration, first func(id int) (backend.Write, error)) (int, error) {
	if err := os.MkdirAll(s.layout.HostIssues(), statedir.HostMode); err != nil {
		return 0, fmt.Errorf("create state directory: %w", err)
	}
	unlock, err := atomicfile.Lock(ctx, s.listLock(), timeout, "the issue list")
	if err != nil {
		return 0, err
	}
	defer unlock()
	ids, err := s.IDs(ctx)
	if err != nil {
		return 0, err
	}
	last, _ := s.LastID(ctx) // unreadable: the ids listed say
	next := last + 1
	if len(ids) > 0 {
		next = max(next, ids[len(ids)-1]+1)
	}
	dir := s.layout.Issue(next)
	if err := os.MkdirAll(dir, statedir.HostMode); err != nil {
		return 0, err
	}
	// Remembered apart from the directories, so the id of an issue
	// deleted later is never given to another: its history, branch and
	// PR stay its own, and it is listed as missing (Missing).
	if err := s.setLastID(next); err != nil {
		os.RemoveAll(dir)
		return 0, err
	}
	// Under the issue's lock, so that nobody looks at it between its
	// first line and its issue.yaml.
	unlockIssue, err := atomicfile.Lock(ctx, s.lockPath(next), timeout, fmt.Sprintf("issue %d", next))
	if err != nil {
		s.uncreate(next)
		return 0, err
	}
	defer unlockIssue()
	w, err := first(next)
	if err != nil {
		s.uncreate(next)
		return 0, err
	}
	if logged, err := s.commit(w); err != nil {
		if !logged {
			s.uncreate(next)
			return 0, err
		}
		return next, err
	}
	return next, nil
}

func (s *Store) setLastID(id int) error {
	return atomicfile.Write(s.lastIDPath(), lastID(id), 0o644)
}

// lastID is the content of the file that remembers the last id given.
func lastID(id int) []byte { return []byte(strconv.Itoa(id) + "\n") }

// uncreate undoes a Create of id that logged nothing, under the list
// lock: id was never an issue's, so it is given back before its directory
// goes, and is never listed as missing. Were it not given back, the
// directory stays, as one being created.
func (s *Store) uncreate(id int) {
	err := s.setLastID(id - 1)
	if atomicfile.DiskTrouble(err) {
		// A full disk has no room for a temp file beside it: the file is
		// rewritten in place, which takes no more room than it holds. A
		// crash in between leaves it unreadable, and then the ids listed
		// say which is next (Create).
		err = os.WriteFile(s.lastIDPath(), lastID(id-1), 0o644)
	}
	if err == nil {
		os.RemoveAll(s.layout.Issue(id))
	}
}

// listLock serializes the writers of the issue list: Create, and the
// store's adoption of issues from before chains.
func (s *Store) listLock() string { return filepath.Join(s.layout.HostIssues(), ".lock") }

// WriteWatch replaces watch.yaml atomically, without an fsync: a power
// loss costs at most a poll again.
func (s *Store) WriteWatch(_ context.Context, _ backend.Held, id int, data []byte) error {
	return atomicfile.Replace(s.issue(id).watch, data, 0o644)
}

// DropTorn truncates events.jsonl to its last complete line.
func (s *Store) DropTorn(_ context.Context, _ backend.Held, id int, t chain.Tail) error {
	return s.issue(id).log.DropTorn(t)
}

// SetAside moves the lines from fromLine on into the file name in the
// issue's directory (appended to, made if missing).
func (s *Store) SetAside(_ context.Context, _ backend.Held, id int, fromLine int, name string) (int, error) {
	f := s.issue(id)
	var offset int64
	if fromLine > 1 {
		data, err := os.ReadFile(f.log.Path)
		if err != nil {
			return 0, err
		}
		offset = lineOffset(data, fromLine)
	}
	return f.log.SetAside(offset, filepath.Join(s.layout.Issue(id), name))
}

// lineOffset is where line n (from 1) of data starts: after n-1 line
// ends, as chain.Verify numbers lines; len(data) when data has fewer.
func lineOffset(data []byte, n int) int64 {
	offset := 0
	for range n - 1 {
		i := bytes.IndexByte(data[offset:], '\n')
		if i < 0 {
			return int64(len(data))
		}
		offset += i + 1
	}
	return int64(offset)
}
