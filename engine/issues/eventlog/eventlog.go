// Package eventlog is an issue's events.jsonl: the hash chain (package
// chain) of every write of its issue.yaml, what each line holds, and what
// the log says of an issue.yaml: whether it is the state the last line
// logged (the head check every Lock of the store makes), and, read whole,
// which lines verify and which state each holds (verify and repair). It
// reads the log and encodes lines; the store (package issues) appends
// them, under the issue's lock, and writes issue.yaml.
//
// The log is never behind issue.yaml: a line is appended and synced
// before issue.yaml is replaced, so a crash between the two leaves one
// complete line that issue.yaml does not have yet, and the next Lock
// finishes the write from it (an incomplete line, from a crash inside the
// append, is dropped). A mismatch is a *TamperedError, and nothing acts on
// the issue until a person repairs it.
//
// This catches edits made by hand and by tools that do not know about
// the chain. It holds no secret: whoever knows the format can rewrite
// the log and recompute every hash, so where agents run as the same OS
// user as the host it is evidence, not enforcement (docs/SECURITY.md).
package eventlog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/record"
	"github.com/agenttree/agenttree/internal/fielddiff"
)

// Op says what a write of issue.yaml was.
type Op string

const (
	// OpCreate is an issue's first write.
	OpCreate Op = "create"
	// OpUpdate is a change made through the store's Tx.Update.
	OpUpdate Op = "update"
	// OpMigrate starts the chain of an issue written before issues had
	// one, from its state then, when its state directory is migrated from
	// the first layout.
	OpMigrate Op = "migrate"
	// OpRepair restores the last consistent state the log holds.
	OpRepair Op = "repair"
	// OpAdopt starts a new chain from issue.yaml as it is, on a person's
	// word, when the log holds nothing to restore.
	OpAdopt Op = "adopt"
)

// startsChain reports whether op writes the first line of a log.
func (op Op) startsChain() bool { return op == OpCreate || op == OpMigrate || op == OpAdopt }

// Event is one line of events.jsonl: one write of issue.yaml.
//
// State is the issue without its history: the history is the Entries of
// the log's lines, in order, so a line's size does not grow with the
// issue's age and the log stays linear in its writes. StateHash covers
// the whole issue, history included, so the head check also catches an
// edited history.
type Event struct {
	Issue   int       `json:"issue"`
	Version int       `json:"version"`
	Op      Op        `json:"op"`
	At      time.Time `json:"at"`
	// Entries are the history entries this write added (for a chain's
	// first line: the whole history so far).
	Entries []record.HistoryEntry `json:"entries,omitempty"`
	// State is the issue this write produced, without History and Chain.
	State *record.Issue `json:"state"`
	// StateHash is the SHA-256 of the issue this write produced, history
	// included and Chain left out, as JSON.
	StateHash string `json:"state_hash"`
	// Repair says what a repair undid.
	Repair *RepairNote `json:"repair,omitempty"`
}

// RepairNote is what an OpRepair line records of the repair.
type RepairNote struct {
	// Restored is the version whose state was restored.
	Restored int `json:"restored"`
	// Problem is what was wrong.
	Problem string `json:"problem"`
	// Undone are the changes of issue.yaml the repair undid.
	Undone []string `json:"undone,omitempty"`
	// SetAside names the file the lines after the last good one went to.
	SetAside      string `json:"set_aside,omitempty"`
	SetAsideLines int    `json:"set_aside_lines,omitempty"`
}

// File names in an issue's host directory.
const (
	File = "events.jsonl"
	// PreChainFile keeps the log of an issue from before chains (one line
	// per history entry, no hashes) when its chain starts.
	PreChainFile = "events.pre-chain.jsonl"
	// SetAsideFile keeps the lines a repair or an adoption took off the
	// log: the log stays append-only and nothing is deleted.
	SetAsideFile = "events.set-aside.jsonl"
)

// Lines are the lines of an issue's log, read as a hash chain: all a Log
// reads. chain.Log, the log kept in events.jsonl, is one; a store
// backend that keeps its lines elsewhere gives its own, and the checks
// stay the same (docs/ARCHITECTURE.md §2, the store backend). Appending
// is the store's, under the issue's lock.
type Lines interface {
	// Tail is the log's last complete line, Torn > 0 after it for an
	// append cut short. A missing log is an error wrapping
	// fs.ErrNotExist.
	Tail() (chain.Tail, error)
	// Verify is every line, hashes and links checked (chain.Verify).
	Verify() ([]chain.Line, error)
}

// Log is the event log of issue ID.
type Log struct {
	Lines
	ID int
}

// In is the event log of issue id kept in events.jsonl in dir, its host
// directory.
func In(dir string, id int) Log {
	return Log{Lines: chain.Log{Path: filepath.Join(dir, File)}, ID: id}
}

// stateHash is the hash Event.StateHash holds for iss: of its JSON, so
// that the writer (from the issue it holds) and every reader (from the
// issue it parsed from issue.yaml, or from a line) get the same. Every
// field has a concrete type whose JSON a YAML or JSON round trip keeps,
// except vars, whose values are anything: the writer hashes them as a
// reader parses them (Encode).
func stateHash(iss *record.Issue) (string, error) {
	c := *iss
	c.Chain = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// writtenHash is stateHash of iss as a reader will parse it from
// issue.yaml.
func writtenHash(iss *record.Issue) (string, error) {
	if len(iss.Vars) == 0 {
		return stateHash(iss)
	}
	vars, err := asParsed(iss.Vars)
	if err != nil {
		return "", fmt.Errorf("issue %d: vars: %w", iss.ID, err)
	}
	c := *iss
	c.Vars = vars
	return stateHash(&c)
}

// asParsed is vars as a reader of issue.yaml parses them.
func asParsed(vars map[string]any) (map[string]any, error) {
	data, err := yaml.Marshal(vars)
	if err != nil {
		return nil, err
	}
	var back map[string]any
	err = yaml.Unmarshal(data, &back)
	return back, err
}

// Encode is the line that logs iss as op wrote it at at, after the line
// prev, with the history entries it added (and, for a repair, its note):
// the bytes to append, and the line's hash, which issue.yaml's Chain is
// to hold.
func Encode(prev string, iss *record.Issue, op Op, at time.Time, entries []record.HistoryEntry, note *RepairNote) ([]byte, string, error) {
	sum, err := writtenHash(iss)
	if err != nil {
		return nil, "", err
	}
	state := *iss
	state.History, state.Chain = nil, ""
	ev := Event{Issue: iss.ID, Version: iss.Version, Op: op, At: at,
		Entries: entries, State: &state, StateHash: sum, Repair: note}
	raw, line, err := chain.Encode(prev, ev)
	if err != nil {
		return nil, "", fmt.Errorf("issue %d: log the change: %w", iss.ID, err)
	}
	return raw, line.Hash, nil
}

// after is the issue ev logged, from the history before it.
func (ev *Event) after(history []record.HistoryEntry) *record.Issue {
	next := *ev.State
	if ev.Op.startsChain() {
		next.History = slices.Clone(ev.Entries)
	} else {
		next.History = append(slices.Clone(history), ev.Entries...)
	}
	return &next
}

// Diff says, field by field, how now differs from was. The chain field is
// left out: it is how the change was found, not a change.
func Diff(was, now *record.Issue) []string { return fielddiff.Of(was, now, "chain") }
