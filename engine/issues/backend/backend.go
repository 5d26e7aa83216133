// Package backend is what the issue store (package issues) keeps its
// state in: the bytes of each issue's issue.yaml and watch.yaml and the
// lines of its log. A backend stores and lists those bytes; every rule
// (what a valid issue is, the version compare-and-swap, append-only
// history, the hash chain and its head check, repair) stays in package
// issues and eventlog, so it means the same whatever keeps the bytes
// (docs/ARCHITECTURE.md §2). Package filestore keeps them in files under
// the state directory, package etcdstore in etcd; package storetest is
// the suite both pass.
//
// This package holds types only (and As, which finds one through
// wrappers), so that issues and each backend import it and not each
// other.
package backend

import (
	"context"
	"errors"
	"time"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
)

// Snapshot is one issue as stored, unchecked: the store checks it
// against the log (eventlog.Log.CheckHead).
type Snapshot struct {
	ID int
	// State is issue.yaml's bytes; nil when the issue has none (one being
	// created, or damaged: the store tells which from its log).
	State []byte
}

// Backend keeps the issues of one state directory. Reads take no lock:
// the store checks what it reads against the log, and takes an issue's
// lock for anything it writes.
type Backend interface {
	// IDs are the ids of the issues stored, in ascending order, without
	// reading them: one unreadable issue does not hide the others.
	IDs(ctx context.Context) ([]int, error)
	// LastID is the last id the store gave an issue, 0 when none is
	// recorded. Ids are never given twice, so it may be above every id
	// IDs lists (an issue removed outside agenttree).
	LastID(ctx context.Context) (int, error)
	// Gone reports whether nothing at all is stored for issue id.
	Gone(ctx context.Context, id int) (bool, error)
	// Read reads issue id's state.
	Read(ctx context.Context, id int) (Snapshot, error)
	// Log is issue id's log, for the head check and whole-log reads
	// (verify, repair).
	Log(id int) eventlog.Lines
	// ReadWatch reads issue id's watch.yaml bytes; nil when it has none.
	ReadWatch(ctx context.Context, id int) ([]byte, error)

	// Lock takes issue id's lock, waiting until ctx ends or timeout
	// passes (none when 0); ErrNotStored when nothing is stored for id.
	// A wait that ends with the lock held elsewhere is an error wrapping
	// atomicfile.ErrLocked (and ctx's error when ctx ended it), which
	// commands and the controller tell apart as busy.
	Lock(ctx context.Context, id int, timeout time.Duration) (Held, error)
	// TryLock is Lock without waiting: ErrBusy when it cannot be taken
	// now.
	TryLock(ctx context.Context, id int) (Held, error)
	// Create gives the next id never given before (above LastID and every
	// id listed) and, under that lock, writes what first returns
	// for it. The id is 0 unless the first line was logged: an error with
	// an id is a line logged whose state was not written, which the next
	// Lock finishes. Nothing logged gives the id back.
	Create(ctx context.Context, timeout time.Duration, first func(id int) (Write, error)) (int, error)
	// Commit makes w under h, issue w.ID's lock. logged is whether the
	// line is in the log: with an error, the state was not written.
	Commit(ctx context.Context, h Held, w Write) (logged bool, err error)
	// WriteWatch replaces issue id's watch.yaml; it is polling state,
	// neither versioned nor logged.
	WriteWatch(ctx context.Context, h Held, id int, data []byte) error
	// DropTorn cuts the incomplete line t, issue id's log's tail read
	// under h, found after its last complete line.
	DropTorn(ctx context.Context, h Held, id int, t chain.Tail) error
	// SetAside moves the lines of issue id's log from fromLine on (1:
	// the whole log) to the record called name, and cuts them off the
	// log. It returns how many lines it moved; a missing log is an error
	// wrapping fs.ErrNotExist.
	SetAside(ctx context.Context, h Held, id int, fromLine int, name string) (int, error)
}

// ErrBusy is TryLock's answer when another process holds the issue's
// lock, or this one may not take it (an agent of another OS user may read
// the state, not lock it): the caller reads without the lock instead.
var ErrBusy = errors.New("issue lock held")

// ErrNotStored is Lock's answer for an issue with neither state nor log.
var ErrNotStored = errors.New("nothing is stored for the issue")

// Held is an issue's lock, which every write of the issue is made under.
type Held interface {
	Unlock()
}

// Write is one commit of an issue: a log line and the state it logs,
// made so that the line is never behind the state.
type Write struct {
	ID int
	// Line is eventlog.Encode's bytes, "\n"-terminated; nil writes the
	// state only (finishing a write a crash cut short after its line).
	Line []byte
	// State is issue.yaml's new bytes, its chain field the line's hash.
	State []byte
}

// Whole is one issue as a backend keeps it, every byte: what `agenttree
// migrate` moves from one backend to another (package transfer).
type Whole struct {
	ID int
	// State is issue.yaml's bytes, nil when there is none.
	State []byte
	// Log is the log's lines, each with its "\n" (an incomplete last one
	// as it is), as events.jsonl holds them; nil when there is no log.
	Log []byte
	// Watch is watch.yaml's bytes, nil when there is none.
	Watch []byte
	// Aside are the records lines were set aside in (SetAside), by name.
	Aside map[string][]byte
}

// Porter is a backend whose issues are read and written whole.
type Porter interface {
	Backend
	// Export reads issue id whole. The caller holds its lock, so that no
	// write is read half made.
	Export(ctx context.Context, id int) (Whole, error)
	// Import replaces what is stored for issue w.ID with w, under its
	// lock, which it takes (waiting up to timeout): the log before the
	// state, so that a crash leaves a log with no state, which Import
	// replaces again, never a state its log does not hold.
	Import(ctx context.Context, w Whole, timeout time.Duration) error
	// KeepLastID records n as the last id given, unless a higher one is.
	KeepLastID(ctx context.Context, n int) error
}

// Watcher is a backend that tells of its issues' changes as they are
// made (etcd's watch), for a reader that keeps what it read (the
// controller's due set, docs/ARCHITECTURE.md §6). A backend kept in files
// is not one: the files' own notifications tell of them.
type Watcher interface {
	Backend
	// Watch calls changed with the id of each issue whose state, log or
	// watch state changed, or that was created or removed, from the
	// moment it returns ready until ctx ends; lost when changes may have
	// gone untold (the watch broke and was made again). It returns when
	// ctx ends, or with the error that stops it.
	Watch(ctx context.Context, ready func(), changed func(id int), lost func()) error
}

// As is b, or the first backend it wraps that is a T: an optional
// capability found through wrappers, each with an Unwrap method
// returning the backend it wraps (as net/http's ResponseController finds
// a writer's). A store reads through a wrapper (a test's that counts its
// reads) as through what it wraps.
func As[T any](b Backend) (T, bool) {
	for {
		if t, ok := b.(T); ok {
			return t, true
		}
		u, ok := b.(interface{ Unwrap() Backend })
		if !ok {
			var zero T
			return zero, false
		}
		b = u.Unwrap()
	}
}
