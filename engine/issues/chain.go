package issues

import (
	"context"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// An issue's events.jsonl is a hash chain of its writes, and issue.yaml's
// Chain field is the hash of the last line: the line that logged that very
// state (package eventlog says what a line holds and how a log is
// checked). The line is appended and synced before issue.yaml is
// replaced, so the log is never behind. Every Lock checks the head
// (eventlog.Log.CheckHead), and nothing acts on an issue that fails until
// a person repairs it (Store.Repair).

// The names the store writes with (eventlog).
type (
	// Op says what a write of issue.yaml was.
	Op = eventlog.Op
	// Event is one line of events.jsonl.
	Event = eventlog.Event
	// RepairNote is what an OpRepair line records of the repair.
	RepairNote = eventlog.RepairNote
)

// What a write of issue.yaml was (eventlog.Op).
const (
	OpCreate  = eventlog.OpCreate
	OpUpdate  = eventlog.OpUpdate
	OpMigrate = eventlog.OpMigrate
	OpRepair  = eventlog.OpRepair
	OpAdopt   = eventlog.OpAdopt
)

// events is issue id's log, read through the backend.
func (s *Store) events(id int) eventlog.Log { return eventlog.Log{Lines: s.b.Log(id), ID: id} }

// encode is the write that logs iss as op wrote it, after the line prev:
// the line and issue.yaml's new bytes, its Chain set to the line's hash,
// which it returns.
func (s *Store) encode(prev string, iss *Issue, op Op, entries []HistoryEntry, note *RepairNote) (backend.Write, string, error) {
	raw, hash, err := eventlog.Encode(prev, iss, op, s.now().UTC().Truncate(time.Second), entries, note)
	if err != nil {
		return backend.Write{}, "", err
	}
	written := *iss
	written.Chain = hash
	data, err := yaml.Marshal(&written)
	if err != nil {
		return backend.Write{}, "", fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	return backend.Write{ID: iss.ID, Line: raw, State: data}, hash, nil
}

// commit logs iss as op wrote it, after the line prev, then replaces
// issue.yaml with it, its Chain set to the new line. It returns the bytes
// of issue.yaml: nil when nothing was logged, set with an error when the
// line was logged but issue.yaml not written.
func (t *Tx) commit(prev string, iss *Issue, op Op, entries []HistoryEntry, note *RepairNote) ([]byte, error) {
	w, hash, err := t.s.encode(prev, iss, op, entries, note)
	if err != nil {
		return nil, err
	}
	logged, err := t.s.b.Commit(context.Background(), t.held, w)
	if !logged && err != nil {
		return nil, fmt.Errorf("issue %d: the change was not saved and the issue is as it was: %w", iss.ID, atomicfile.Explain(err))
	}
	iss.Chain = hash
	if err != nil {
		return w.State, notWritten(iss.ID, err)
	}
	return w.State, nil
}

// notWritten is the error of a write whose line was logged and whose
// issue.yaml was not written: the change is made, the log holds it, and
// the next Lock finishes the write.
func notWritten(id int, err error) error {
	// %v: the change is made, whatever refused issue.yaml (a full disk
	// is not "nothing changed", atomicfile.DiskTrouble).
	return fmt.Errorf("issue %d: the change is logged in %s, but issue.yaml was not written (%v); the next command on the issue finishes it",
		id, eventlog.File, err)
}
