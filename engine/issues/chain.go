package issues

import (
	"fmt"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
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

// logFile is issue id's events.jsonl, which the store appends to, cuts and
// sets aside under the issue's lock; eventlog only reads it (events).
func (s *Store) logFile(id int) chain.Log {
	return chain.Log{Path: filepath.Join(s.HostDir(id), eventlog.File)}
}

// commit logs iss as op wrote it, after the line prev, then replaces
// issue.yaml with it, its Chain set to the new line. It returns the bytes
// of issue.yaml: nil when nothing was logged, set with an error when the
// line was logged but issue.yaml not written. The caller holds the
// issue's lock.
func (s *Store) commit(prev string, iss *Issue, op Op, entries []HistoryEntry, note *RepairNote) ([]byte, error) {
	raw, hash, err := eventlog.Encode(prev, iss, op, s.now().UTC().Truncate(time.Second), entries, note)
	if err != nil {
		return nil, err
	}
	written := *iss
	written.Chain = hash
	data, err := yaml.Marshal(&written)
	if err != nil {
		return nil, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	// The line and issue.yaml's new content are synced at the same time:
	// each must be on disk before the rename puts the content in place,
	// and neither needs the other first (until the rename, issue.yaml is
	// the old state whatever of the two a crash left). One fsync's wait
	// instead of two.
	logged := make(chan error, 1)
	go func() { logged <- s.logFile(iss.ID).AppendEncoded(raw) }()
	pending, err := atomicfile.Prepare(s.path(iss.ID), data, 0o644)
	if lerr := <-logged; lerr != nil {
		if pending != nil {
			pending.Discard()
		}
		return nil, fmt.Errorf("issue %d: log the change: %w", iss.ID, lerr)
	}
	iss.Chain = hash
	if err == nil {
		err = pending.Commit()
	}
	if err != nil {
		// The change is made: the log holds it. data is what issue.yaml
		// will hold once the next Lock finishes the write.
		return data, fmt.Errorf("issue %d: the change is logged in %s, but issue.yaml was not written (%w); the next command on the issue finishes it",
			iss.ID, eventlog.File, err)
	}
	return data, nil
}
