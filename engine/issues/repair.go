package issues

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues/eventlog"
)

// ErrNothingToRestore is returned by Repair for an issue whose log holds
// no state: only adopting issue.yaml as it is (a person's word) can
// start its chain again.
var ErrNothingToRestore = errors.New("its events.jsonl holds no state to restore")

// Repair restores issue id to the last consistent state its log holds:
// the log's lines after its last good one are set aside in
// events.set-aside.jsonl (the log stays append-only: nothing is
// deleted), issue.yaml is written from the last good line's state, and
// an OpRepair line records what was undone. The restored issue gets a
// new version, above any it was seen with, so a command that read it
// before the repair cannot act on it. With adopt, a new chain starts
// from issue.yaml as it is instead (the whole log set aside): for an
// issue whose log holds nothing to restore, once a person has checked
// issue.yaml. Repairing an issue that needs none changes nothing.
// Repair is for people: the caller checks who asks.
func (s *Store) Repair(ctx context.Context, id int, adopt bool) (*Repaired, error) {
	tx, err := s.lockRaw(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	rep, err := s.Verify(id)
	if err != nil {
		return nil, err
	}
	done := &Repaired{ID: id, Action: RepairNone, Problems: rep.Problems}
	if rep.OK {
		if rep.Interrupted || rep.Torn {
			done.Action = RepairFinished
		}
		iss, err := tx.load()
		if err != nil {
			return nil, err
		}
		done.Version = iss.Version
		return done, nil
	}
	cur, _ := s.read(id) // nil when missing or unreadable
	if adopt {
		return tx.adopt(done, cur)
	}
	return tx.restore(done, cur)
}

// restore writes the last good state of the log back, as Repair says.
func (t *Tx) restore(done *Repaired, cur *Issue) (*Repaired, error) {
	r := t.s.events(t.id).Replay()
	if r.Last == nil {
		return nil, fmt.Errorf("issue %d: %w; if its issue.yaml is right (look at it), `agenttree repair %d --adopt` starts a new chain from it",
			t.id, ErrNothingToRestore, t.id)
	}
	if r.Cut >= 0 {
		aside := filepath.Join(t.s.HostDir(t.id), eventlog.SetAsideFile)
		// The lines that verify are the first ones, up to the cut.
		n, err := t.s.b.SetAside(context.Background(), t.held, t.id, len(r.Lines)+1, eventlog.SetAsideFile)
		if err != nil {
			return nil, fmt.Errorf("issue %d: %w", t.id, err)
		}
		done.SetAside, done.SetAsideLines = aside, n
	}
	restored := *r.Last
	done.Restored = restored.Version
	if cur != nil {
		done.Undone = eventlog.Diff(r.Last, cur)
		restored.Version = max(restored.Version, cur.Version)
	}
	restored.Version++
	restored.Updated = t.s.now().UTC().Truncate(time.Second)
	note := &RepairNote{Restored: done.Restored, Problem: strings.Join(done.Problems, "; "), Undone: done.Undone,
		SetAside: filepath.Base(done.SetAside), SetAsideLines: done.SetAsideLines}
	data, err := t.commit(r.LastLine().Hash, &restored, OpRepair, nil, note)
	if err != nil {
		return nil, err
	}
	t.data, t.head = data, restored.Chain
	done.Action, done.Version = RepairRestored, restored.Version
	return done, nil
}

// adopt starts a new chain from cur, as Repair says.
func (t *Tx) adopt(done *Repaired, cur *Issue) (*Repaired, error) {
	if cur == nil {
		return nil, fmt.Errorf("issue %d: its issue.yaml is missing or cannot be read, so there is nothing to adopt; `agenttree repair %d` restores the last state its log holds", t.id, t.id)
	}
	if cur.ID != t.id {
		return nil, fmt.Errorf("issue %d: its issue.yaml says it is issue %d; fix that by hand before adopting it", t.id, cur.ID)
	}
	data, n, err := t.startChain(cur, OpAdopt, eventlog.SetAsideFile)
	if err != nil {
		return nil, err
	}
	done.SetAside, done.SetAsideLines = filepath.Join(t.s.HostDir(t.id), eventlog.SetAsideFile), n
	t.data, t.head = data, cur.Chain
	done.Action, done.Version = RepairAdopted, cur.Version
	return done, nil
}
