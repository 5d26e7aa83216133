package issues

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// An issue's events.jsonl is a hash chain (package chain) with one line,
// an Event, per write of its issue.yaml, and issue.yaml's Chain field is
// the hash of the last line: the line that logged that very state. The
// line is appended and synced before issue.yaml is replaced, so the log
// is never behind: a crash between the two leaves one complete line that
// issue.yaml does not have yet, and the next Lock finishes the write from
// it (an incomplete line, from a crash inside the append, is dropped).
//
// Every Lock checks the head: issue.yaml must name the log's last line,
// and hash to the state that line logged. That reads the last line only,
// from the end of the file. A mismatch is a *TamperedError, and nothing
// acts on the issue until a person repairs it (Store.Repair).
//
// This catches edits made by hand and by tools that do not know about
// the chain. It holds no secret: whoever knows the format can rewrite
// the log and recompute every hash, so where agents run as the same OS
// user as the host it is evidence, not enforcement (docs/SECURITY.md).

// Op says what a write of issue.yaml was.
type Op string

const (
	// OpCreate is an issue's first write.
	OpCreate Op = "create"
	// OpUpdate is a change made through Tx.Update.
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
	Entries []HistoryEntry `json:"entries,omitempty"`
	// State is the issue this write produced, without History and Chain.
	State *Issue `json:"state"`
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
	eventsFile = "events.jsonl"
	// preChainFile keeps the log of an issue from before chains (one line
	// per history entry, no hashes) when its chain starts.
	preChainFile = "events.pre-chain.jsonl"
	// setAsideFile keeps the lines a repair or an adoption took off the
	// log: the log stays append-only and nothing is deleted.
	setAsideFile = "events.set-aside.jsonl"
)

func (s *Store) events(id int) chain.Log {
	return chain.Log{Path: filepath.Join(s.HostDir(id), eventsFile)}
}

// stateHash is the hash Event.StateHash holds for iss: of its JSON, so
// that the writer (from the issue it holds) and every reader (from the
// issue it parsed from issue.yaml, or from a line) get the same. Every
// field has a concrete type whose JSON a YAML or JSON round trip keeps,
// except vars, whose values are anything: the writer hashes them as a
// reader parses them (writtenHash).
func stateHash(iss *Issue) (string, error) {
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
func writtenHash(iss *Issue) (string, error) {
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

// commit logs iss as op wrote it, after the line prev, then replaces
// issue.yaml with it, its Chain set to the new line. It returns the bytes
// of issue.yaml: nil when nothing was logged, set with an error when the
// line was logged but issue.yaml not written. The caller holds the
// issue's lock.
func (s *Store) commit(prev string, iss *Issue, op Op, entries []HistoryEntry, note *RepairNote) ([]byte, error) {
	sum, err := writtenHash(iss)
	if err != nil {
		return nil, err
	}
	state := *iss
	state.History, state.Chain = nil, ""
	ev := Event{Issue: iss.ID, Version: iss.Version, Op: op, At: s.now().UTC().Truncate(time.Second),
		Entries: entries, State: &state, StateHash: sum, Repair: note}
	raw, line, err := chain.Encode(prev, ev)
	if err != nil {
		return nil, fmt.Errorf("issue %d: log the change: %w", iss.ID, err)
	}
	written := *iss
	written.Chain = line.Hash
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
	go func() { logged <- s.events(iss.ID).AppendEncoded(raw) }()
	pending, err := atomicfile.Prepare(s.path(iss.ID), data, 0o644)
	if lerr := <-logged; lerr != nil {
		if pending != nil {
			pending.Discard()
		}
		return nil, fmt.Errorf("issue %d: log the change: %w", iss.ID, lerr)
	}
	iss.Chain = line.Hash
	if err == nil {
		err = pending.Commit()
	}
	if err != nil {
		// The change is made: the log holds it. data is what issue.yaml
		// will hold once the next Lock finishes the write.
		return data, fmt.Errorf("issue %d: the change is logged in %s, but issue.yaml was not written (%w); the next command on the issue finishes it",
			iss.ID, eventsFile, err)
	}
	return data, nil
}

// adoptPreChains gives every issue from before chains its chain
// (OpMigrate, from its state as it is), while its state directory is
// migrated from the first layout (statedir.Layout.Migrate said so), then
// records that this is done: at any other time, an issue without a chain
// is tampering, never one from before chains. It holds the issue list's
// lock. An issue that cannot be read is left as it is (it is damaged,
// and says so when used).
func (s *Store) adoptPreChains(ctx context.Context) error {
	if _, err := os.Stat(s.layout.HostIssues()); errors.Is(err, fs.ErrNotExist) {
		return s.layout.Adopted(ctx) // no issues
	}
	unlock, err := s.lock(ctx, s.listLock(), "the issue list")
	if err != nil {
		return err
	}
	defer unlock()
	return s.adoptPreChainsLocked(ctx)
}

// adoptPreChainsLocked is adoptPreChains with the issue list's lock held.
func (s *Store) adoptPreChainsLocked(ctx context.Context) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	busy := false
	for _, id := range ids {
		// An issue busy for longer than a moment is adopted by the next
		// Open: the migration is done only once every issue is.
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		tx, err := s.lockRaw(lctx, id)
		cancel()
		switch {
		case errors.Is(err, atomicfile.ErrLocked) && ctx.Err() == nil:
			busy = true
			continue
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("start the tamper-evident log of issue %d: %w", id, err)
		}
		err = tx.adoptPreChain()
		tx.Unlock()
		if err != nil {
			return fmt.Errorf("start the tamper-evident log of issue %d: %w", id, err)
		}
	}
	if busy {
		return nil
	}
	return s.layout.Adopted(ctx)
}

// adoptPreChain starts the chain of the issue if it is from before
// chains (preChain), its old log set aside in events.pre-chain.jsonl, and
// only the host could have written it (hostOnly).
func (t *Tx) adoptPreChain() error {
	iss, err := t.s.read(t.id)
	if err != nil || iss.ID != t.id || !t.s.preChain(t.id, iss) {
		return nil // chained, or damaged: every Lock checks it
	}
	if path, why := t.s.hostOnly(t.id); why != "" {
		t.s.leftAlone(path, why) // never adopted: every Lock refuses it
		return nil
	}
	_, _, err = t.startChain(iss, OpMigrate, preChainFile)
	return err
}

// preChain reports whether iss, issue id's issue.yaml, is as an issue
// from before chains was: no chain field, and a log with no line of a
// chain (the old one, of one line per history entry), or none (the old
// log followed issue.yaml, so a crash could leave none).
func (s *Store) preChain(id int, iss *Issue) bool {
	if iss.Chain != "" {
		return false
	}
	lines, err := s.events(id).Verify()
	return len(lines) == 0 && (err == nil || errors.Is(err, fs.ErrNotExist) ||
		errors.Is(err, chain.ErrFormat) || errors.Is(err, chain.ErrTorn))
}
