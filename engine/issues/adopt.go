package issues

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// migrate runs the state directory's migration from the first layout
// (statedir.Layout.Migrate), keeping what it left alone for the command
// to show (Warnings), and reports whether the state from before chains
// is to be adopted.
func (s *Store) migrate(ctx context.Context) (bool, error) {
	m, err := s.layout.Migrate(ctx)
	s.warn(m.Warnings()...)
	return m.Adopt, err
}

func (s *Store) warn(w ...string) {
	if len(w) == 0 {
		return
	}
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	s.warnings = append(s.warnings, w...)
}

// Warnings are what people should know of opening the store (or of a
// Create that set it up): what a migration from the first layout did not
// take as the host's, and why. Commands show them; nothing else does.
func (s *Store) Warnings() []string {
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	return slices.Clone(s.warnings)
}

// hostOnly says how someone other than the host could have written issue
// id's files from before chains (issue.yaml, and events.jsonl when there
// is one), or put them where they are; "" when only the host could have.
// Only such files are adopted (docs/SECURITY.md).
func (s *Store) hostOnly(id int) (path, why string) {
	for _, path := range []string{s.path(id), filepath.Join(s.HostDir(id), eventlog.File)} {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if why := s.layout.HostOnly(path); why != "" {
			return path, why
		}
	}
	return "", ""
}

// leftAlone keeps the warning that path was not adopted.
func (s *Store) leftAlone(path, why string) {
	s.warn(statedir.Migration{LeftAlone: []statedir.LeftAlone{{Path: path, Why: why}}}.Warnings()...)
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
	_, _, err = t.startChain(iss, OpMigrate, eventlog.PreChainFile)
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
