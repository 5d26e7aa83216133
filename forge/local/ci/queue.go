package ci

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// startOrQueue starts attempt of sha's CI, or, when Options.MaxParallel
// runs are going already, records it as queued: pending, no runner, no
// start time, so that wait_for_ci's timeout runs from when it starts
// (docs/CONFIG.md, ci.max_parallel). A queued attempt starts at the first
// look at its checks that finds a run slot free; no look, no start, which
// is what a commit nobody waits for deserves. prev is sha's record, nil
// when there is none. The caller holds the commit's lock.
func (r *Runs) startOrQueue(ctx context.Context, sha string, attempt int, prev *record) (*record, error) {
	if r.opts.MaxParallel <= 0 {
		return r.start(ctx, sha, attempt, 0, "")
	}
	// One queue lock, taken while holding at most one commit's lock and
	// never the other way round, so counting and starting are one step:
	// two polls cannot both take the last slot.
	unlock, err := atomicfile.Lock(ctx, filepath.Join(r.opts.LockDir, "ci-queue.lock"), r.opts.LockTimeout, "local CI's queue")
	if err != nil {
		return nil, err
	}
	defer unlock()
	busy := r.running(sha)
	if busy < r.opts.MaxParallel {
		note := ""
		if prev != nil && prev.Queued {
			note = fmt.Sprintf("agenttree: queued for %s behind other CI runs (ci.max_parallel: %d)",
				now().Sub(prev.QueuedAt).Round(time.Second), r.opts.MaxParallel)
		}
		return r.start(ctx, sha, attempt, 0, note)
	}
	if prev != nil && prev.Queued {
		return prev, nil
	}
	rec := &record{SHA: sha, Attempt: attempt, State: forge.CheckPending, Command: r.opts.Command,
		Queued: true, QueuedAt: now()}
	if err := r.write(rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// running counts the CI runs going now, other than sha's: pending
// records whose runner is alive. A record that cannot be read counts for
// nothing; its own commit's checks say what is wrong with it.
func (r *Runs) running(sha string) int {
	names, _ := filepath.Glob(filepath.Join(r.opts.Dir, "*.yaml"))
	n := 0
	for _, name := range names {
		other := strings.TrimSuffix(filepath.Base(name), ".yaml")
		if other == sha || strings.Contains(other, ".") {
			continue
		}
		rec, err := r.read(other)
		if err != nil || rec == nil || rec.State != forge.CheckPending || rec.Queued {
			continue
		}
		if alive, _ := r.runnerAlive(rec); alive {
			n++
		}
	}
	return n
}
