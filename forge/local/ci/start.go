package ci

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

// defaultGrace is Options.Grace unless set.
const defaultGrace = 10 * time.Second

// resultMargin is how long past Options.Timeout a run may stay without a
// result before it counts as lost even though its process seems alive: by
// then the runner's own time limit, the grace and the work tree clean-up
// are long over, so the pid has been reused or the runner is stuck.
const resultMargin = 5 * time.Minute

// maxRestarts is how many times a runner that vanished without a result
// is started again before the run is recorded as failed. One restart
// covers the usual cause, a reboot or a killed session; a runner that
// keeps vanishing is a problem for a person, not a loop.
const maxRestarts = 1

// start records attempt as pending and starts its runner. The record is
// written before anything runs, so a crash at any point leaves a record
// whose runner is known (pid 0: never started) and whose work tree is
// known. The caller holds the commit's lock.
func (r *Runs) start(ctx context.Context, sha string, attempt, restarts int, note string) (*record, error) {
	if r.opts.Refused != nil {
		return nil, fmt.Errorf("local CI of %s: %w: %w", gitx.ShortSHA(sha), forge.ErrUnavailable, r.opts.Refused)
	}
	r.sweep(sha, attempt)
	rec, err := r.newAttempt(ctx, sha, attempt, restarts)
	if err != nil {
		return nil, err
	}
	pid, err := r.launch(ctx, rec, note)
	if err != nil {
		return nil, r.abandon(ctx, rec, err)
	}
	rec.PID = pid
	if err := r.write(rec); err != nil {
		// The runner runs on, but the record still says pid 0: the next
		// call takes it for one that never started and runs a new attempt,
		// and this one's result, filed under its own attempt, is ignored.
		return nil, err
	}
	return rec, nil
}

// newAttempt writes the pending record of attempt, with the work tree it
// is to run in.
func (r *Runs) newAttempt(ctx context.Context, sha string, attempt, restarts int) (*record, error) {
	host, _ := os.Hostname()
	wt, err := cirun.NewWorktree()
	if err != nil {
		return nil, fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(sha), err)
	}
	rec := &record{SHA: sha, Attempt: attempt, State: forge.CheckPending, Command: r.opts.Command,
		Host: host, Worktree: wt, Restarts: restarts, StartedAt: now()}
	if err := r.write(rec); err != nil {
		cirun.RemoveWorktree(ctx, r.opts.Bare, wt)
		return nil, err
	}
	return rec, nil
}

// launch checks rec's commit out into its work tree, starts its log with
// note and the command, and starts its runner, whose pid it returns.
func (r *Runs) launch(ctx context.Context, rec *record, note string) (int, error) {
	if err := r.opts.Bare.WorktreeAdd(ctx, rec.Worktree, rec.SHA); err != nil {
		return 0, fmt.Errorf("check out: %w", err)
	}
	header := "$ " + r.opts.Command + "\n"
	if note != "" {
		header = note + "\n" + header
	}
	if err := atomicfile.Write(r.runPath(rec.SHA, rec.Attempt, ".log"), []byte(header), 0o644); err != nil {
		return 0, err
	}
	pid, err := cirun.Start(r.opts.Runner, r.attempt(rec))
	if err != nil {
		return 0, fmt.Errorf("start: %w", err)
	}
	return pid, nil
}

// abandon gives up an attempt that did not start, for cause: it removes
// the work tree and leaves the record without a verdict, so the next
// Checks starts a new attempt.
func (r *Runs) abandon(ctx context.Context, rec *record, cause error) error {
	cirun.RemoveWorktree(ctx, r.opts.Bare, rec.Worktree)
	rec.State, rec.Worktree = "", ""
	return errors.Join(fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(rec.SHA), cause), r.write(rec))
}

// attempt is what rec's runner is told to do.
func (r *Runs) attempt(rec *record) cirun.Attempt {
	return cirun.Attempt{
		Bare: r.opts.Bare.Dir, Worktree: rec.Worktree, Command: r.opts.Command,
		LogFile: r.runPath(rec.SHA, rec.Attempt, ".log"), ResultFile: r.resultFile(rec),
		Timeout: r.opts.Timeout, Grace: r.opts.Grace, User: r.opts.User,
		Env: r.opts.Env, Vars: []string{"CI=true", "AGENTTREE_CI=1", "AGENTTREE_CI_SHA=" + rec.SHA},
	}
}

// resultFile is where rec's runner publishes its result.
func (r *Runs) resultFile(rec *record) string {
	return r.runPath(rec.SHA, rec.Attempt, ".result")
}

// settle looks at a pending run: it records the result if the runner left
// one, and otherwise, if the runner is gone and mayRestart, starts it
// again or records the failure. The caller holds the commit's lock.
func (r *Runs) settle(ctx context.Context, rec *record, mayRestart bool) (*record, error) {
	// Liveness first: a runner publishes its result before it exits, so a
	// runner seen dead here has left any result it ever will.
	alive, why := r.runnerAlive(rec)
	if res, ok := cirun.ReadResult(r.resultFile(rec)); ok {
		return r.finish(rec, res, "")
	}
	if alive || !mayRestart {
		return rec, nil
	}
	cirun.RemoveWorktree(ctx, r.opts.Bare, rec.Worktree)
	// A runner that died after CI but before publishing left the verdict.
	if res, ok := cirun.ReadUnpublished(r.resultFile(rec)); ok {
		return r.finish(rec, res, "")
	}
	lost := fmt.Sprintf("agenttree: the CI runner of attempt %d (pid %d) stopped without a result: %s", rec.Attempt, rec.PID, why)
	// A start whose starter was stopped before it recorded the runner (a
	// controller killed) lost no runner, and spends no restart.
	restarts := rec.Restarts
	if rec.PID != 0 {
		restarts++
	}
	if rec.PID == 0 || rec.Restarts < maxRestarts {
		return r.start(ctx, rec.SHA, rec.Attempt+1, restarts, lost+"; running CI again")
	}
	return r.finish(rec, cirun.Result{Exit: -1, At: now()},
		lost+"; recorded as a failure (this is not the CI command's verdict). Rerun the check to run CI again.")
}

// runnerAlive reports whether rec's runner may still be running, and if
// not, why not.
func (r *Runs) runnerAlive(rec *record) (bool, string) {
	host, _ := os.Hostname()
	limit := r.opts.Timeout + resultMargin
	switch {
	case rec.PID == 0:
		return false, "it never started"
	case time.Since(rec.StartedAt) > limit:
		return false, fmt.Sprintf("no result %s after it started (CI time limit %s)",
			time.Since(rec.StartedAt).Round(time.Second), r.opts.Timeout)
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
func (r *Runs) finish(rec *record, res cirun.Result, lost string) (*record, error) {
	took := res.At.Sub(rec.StartedAt).Round(time.Millisecond)
	state, note, env := forge.CheckFailure, lost, ""
	switch {
	case lost != "":
		rec.Note = lost
		env = "its CI runner stopped without a result, twice (see the log)"
	case res.Environment == cirun.EnvStart:
		note = fmt.Sprintf("agenttree: CI failed: the command could not be started (exit status %d)", res.Exit)
		env = "the CI command could not be started (see the log)"
	case res.Environment == cirun.EnvSignal:
		note = fmt.Sprintf("agenttree: CI failed: killed by a signal the runner did not send (exit status %d) in %s", res.Exit, took)
		env = "the CI command was killed by a signal agenttree did not send (out of memory, a shutdown?)"
	case res.Cancelled:
		state = forge.CheckCancelled
		note = fmt.Sprintf("agenttree: CI was cancelled after %s: stopped by a signal the runner did not send (exit status %d)", took, res.Exit)
	case res.TimedOut:
		state = forge.CheckTimedOut
		note = fmt.Sprintf("agenttree: CI timed out after %s and was stopped", r.opts.Timeout)
	case res.Exit == 0:
		state = forge.CheckSuccess
		note = fmt.Sprintf("agenttree: CI passed in %s", took)
	default:
		note = fmt.Sprintf("agenttree: CI failed (exit status %d) in %s", res.Exit, took)
	}
	if err := r.finishLog(rec.SHA, rec.Attempt, note); err != nil {
		return nil, err
	}
	rec.State, rec.ExitCode, rec.CompletedAt, rec.PID, rec.Worktree, rec.Environment = state, res.Exit, res.At, 0, "", env
	if err := r.write(rec); err != nil {
		return nil, err
	}
	cirun.RemoveResult(r.resultFile(rec))
	return rec, nil
}
