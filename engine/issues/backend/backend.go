// Package backend is what the issue store (package issues) keeps its
// state in: the bytes of each issue's issue.yaml and watch.yaml and the
// lines of its log. A backend stores and lists those bytes; every rule
// (what a valid issue is, the version compare-and-swap, append-only
// history, the hash chain and its head check, repair) stays in package
// issues and eventlog, so it means the same whatever keeps the bytes
// (docs/ARCHITECTURE.md §2). Package filestore keeps them in files under
// the state directory.
//
// This package holds types only, so that issues and each backend import
// it and not each other.
package backend

import (
	"context"

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
}
