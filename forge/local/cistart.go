package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local/cirun"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
)

// defaultCIGrace is Options.CIGrace unless set.
const defaultCIGrace = 10 * time.Second

// ciMargin is how long past CITimeout a run may stay without a result
// before it counts as lost even though its process seems alive: by then
// the runner's own time limit, the grace and the work tree clean-up are
// long over, so the pid has been reused or the runner is stuck.
const ciMargin = 5 * time.Minute

// maxCIRestarts is how many times a runner that vanished without a result
// is started again before the run is recorded as failed. One restart
// covers the usual cause, a reboot or a killed session; a runner that
// keeps vanishing is a problem for a person, not a loop.
const maxCIRestarts = 1

// startCI records attempt as pending and starts its runner. The record is
// written before anything runs, so a crash at any point leaves a record
// whose runner is known (pid 0: never started) and whose work tree is
// known. The caller holds the commit's lock.
func (f *Forge) startCI(ctx context.Context, sha string, attempt, restarts int, note string) (*ciRecord, error) {
	f.sweep(sha, attempt)
	rec, err := f.newAttempt(ctx, sha, attempt, restarts)
	if err != nil {
		return nil, err
	}
	pid, err := f.launch(ctx, rec, note)
	if err != nil {
		return nil, f.abandon(ctx, rec, err)
	}
	rec.PID = pid
	if err := f.writeCI(rec); err != nil {
		// The runner runs on, but the record still says pid 0: the next
		// call takes it for one that never started and runs a new attempt,
		// and this one's result, filed under its own attempt, is ignored.
		return nil, err
	}
	return rec, nil
}

// newAttempt writes the pending record of attempt, with the work tree it
// is to run in.
func (f *Forge) newAttempt(ctx context.Context, sha string, attempt, restarts int) (*ciRecord, error) {
	host, _ := os.Hostname()
	wt, err := cirun.NewWorktree()
	if err != nil {
		return nil, fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(sha), err)
	}
	rec := &ciRecord{SHA: sha, Attempt: attempt, State: forge.CheckPending, Command: f.opts.CICommand,
		Host: host, Worktree: wt, Restarts: restarts, StartedAt: now()}
	if err := f.writeCI(rec); err != nil {
		cirun.RemoveWorktree(ctx, f.bare, wt)
		return nil, err
	}
	return rec, nil
}

// launch checks rec's commit out into its work tree, starts its log with
// note and the command, and starts its runner, whose pid it returns.
func (f *Forge) launch(ctx context.Context, rec *ciRecord, note string) (int, error) {
	if err := f.bare.WorktreeAdd(ctx, rec.Worktree, rec.SHA); err != nil {
		return 0, fmt.Errorf("check out: %w", err)
	}
	header := "$ " + f.opts.CICommand + "\n"
	if note != "" {
		header = note + "\n" + header
	}
	if err := atomicfile.Write(f.runPath(rec.SHA, rec.Attempt, ".log"), []byte(header), 0o644); err != nil {
		return 0, err
	}
	ciEnv := []string{"CI=true", "AGENTTREE_CI=1", "AGENTTREE_CI_SHA=" + rec.SHA}
	pid, err := cirun.Start(f.opts.Runner, f.attempt(rec), ciEnv)
	if err != nil {
		return 0, fmt.Errorf("start: %w", err)
	}
	return pid, nil
}

// abandon gives up an attempt that did not start, for cause: it removes
// the work tree and leaves the record without a verdict, so the next
// Checks starts a new attempt.
func (f *Forge) abandon(ctx context.Context, rec *ciRecord, cause error) error {
	cirun.RemoveWorktree(ctx, f.bare, rec.Worktree)
	rec.State, rec.Worktree = "", ""
	return errors.Join(fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(rec.SHA), cause), f.writeCI(rec))
}

// attempt is what rec's runner is told to do.
func (f *Forge) attempt(rec *ciRecord) cirun.Attempt {
	return cirun.Attempt{
		Bare: f.bareDir, Worktree: rec.Worktree, Command: f.opts.CICommand,
		LogFile: f.runPath(rec.SHA, rec.Attempt, ".log"), ResultFile: f.resultFile(rec),
		Timeout: f.opts.CITimeout, Grace: f.opts.CIGrace,
	}
}

// resultFile is where rec's runner publishes its result.
func (f *Forge) resultFile(rec *ciRecord) string {
	return f.runPath(rec.SHA, rec.Attempt, ".result")
}

// settle looks at a pending run: it records the result if the runner left
// one, and otherwise, if the runner is gone and mayRestart, starts it
// again or records the failure. The caller holds the commit's lock.
func (f *Forge) settle(ctx context.Context, rec *ciRecord, mayRestart bool) (*ciRecord, error) {
	// Liveness first: a runner publishes its result before it exits, so a
	// runner seen dead here has left any result it ever will.
	alive, why := f.runnerAlive(rec)
	if res, ok := cirun.ReadResult(f.resultFile(rec)); ok {
		return f.finish(rec, res, "")
	}
	if alive || !mayRestart {
		return rec, nil
	}
	cirun.RemoveWorktree(ctx, f.bare, rec.Worktree)
	// A runner that died after CI but before publishing left the verdict.
	if res, ok := cirun.ReadUnpublished(f.resultFile(rec)); ok {
		return f.finish(rec, res, "")
	}
	lost := fmt.Sprintf("agenttree: the CI runner of attempt %d (pid %d) stopped without a result: %s", rec.Attempt, rec.PID, why)
	if rec.Restarts < maxCIRestarts {
		return f.startCI(ctx, rec.SHA, rec.Attempt+1, rec.Restarts+1, lost+"; running CI again")
	}
	return f.finish(rec, cirun.Result{Exit: -1, At: now()},
		lost+"; recorded as a failure (this is not the CI command's verdict). Rerun the check to run CI again.")
}

// runnerAlive reports whether rec's runner may still be running, and if
// not, why not.
func (f *Forge) runnerAlive(rec *ciRecord) (bool, string) {
	host, _ := os.Hostname()
	limit := f.opts.CITimeout + ciMargin
	switch {
	case rec.PID == 0:
		return false, "it never started"
	case time.Since(rec.StartedAt) > limit:
		return false, fmt.Sprintf("no result %s after it started (CI time limit %s)",
			time.Since(rec.StartedAt).Round(time.Second), f.opts.CITimeout)
	case rec.Host != "" && rec.Host != host:
		// Another machine's pid says nothing here; only the age can tell.
		return true, ""
	case !proc.Alive(rec.PID):
		return false, "its process is gone"
	}
	return true, ""
}

// finish records rec's result. A lost note makes it a failure that is not
// the command's verdict, and says why in the log and the record.
func (f *Forge) finish(rec *ciRecord, res cirun.Result, lost string) (*ciRecord, error) {
	took := res.At.Sub(rec.StartedAt).Round(time.Millisecond)
	state, note := forge.CheckFailure, lost
	switch {
	case lost != "":
		rec.Note = lost
	case res.TimedOut:
		state = forge.CheckTimedOut
		note = fmt.Sprintf("agenttree: CI timed out after %s and was stopped", f.opts.CITimeout)
	case res.Exit == 0:
		state = forge.CheckSuccess
		note = fmt.Sprintf("agenttree: CI passed in %s", took)
	default:
		note = fmt.Sprintf("agenttree: CI failed (exit status %d) in %s", res.Exit, took)
	}
	if err := f.finishLog(rec.SHA, rec.Attempt, note); err != nil {
		return nil, err
	}
	rec.State, rec.ExitCode, rec.CompletedAt, rec.PID, rec.Worktree = state, res.Exit, res.At, 0, ""
	if err := f.writeCI(rec); err != nil {
		return nil, err
	}
	cirun.RemoveResult(f.resultFile(rec))
	return rec, nil
}
