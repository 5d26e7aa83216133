package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenttree/agenttree/forge"
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
	host, _ := os.Hostname()
	tmp, err := os.MkdirTemp("", ciTempPrefix)
	if err != nil {
		return nil, fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(sha), err)
	}
	rec := &ciRecord{SHA: sha, Attempt: attempt, State: forge.CheckPending, Command: f.opts.CICommand,
		Host: host, Worktree: filepath.Join(tmp, "src"), Restarts: restarts, StartedAt: now()}
	// abandon leaves no verdict: the next Checks starts a new attempt.
	abandon := func(cause error) (*ciRecord, error) {
		removeCIWorktree(ctx, f.bare, rec.Worktree)
		rec.State, rec.Worktree = "", ""
		return nil, errors.Join(cause, f.writeCI(rec))
	}
	if err := f.writeCI(rec); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	if err := f.bare.WorktreeAdd(ctx, rec.Worktree, sha); err != nil {
		return abandon(fmt.Errorf("local CI of %s: check out: %w", gitx.ShortSHA(sha), err))
	}
	header := "$ " + f.opts.CICommand + "\n"
	if note != "" {
		header = note + "\n" + header
	}
	if err := atomicfile.Write(f.runPath(sha, attempt, ".log"), []byte(header), 0o644); err != nil {
		return abandon(fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(sha), err))
	}
	pid, err := f.spawnRunner(rec)
	if err != nil {
		return abandon(fmt.Errorf("local CI of %s: start: %w", gitx.ShortSHA(sha), err))
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

// spawnRunner starts rec's runner detached and returns its pid. The
// runner's own complaints go to the attempt's log, where a person looks.
func (f *Forge) spawnRunner(rec *ciRecord) (int, error) {
	if os.Getenv(runnerMark) != "" {
		return 0, fmt.Errorf("%s was started as a local CI runner but did not act as one: the program Options.Runner names must handle %q first "+
			"(a test binary: call localtest.RunnerMain in TestMain)", os.Args[0], RunnerCommand)
	}
	run := ciRun{
		bare: f.bareDir, worktree: rec.Worktree, command: f.opts.CICommand,
		log: f.runPath(rec.SHA, rec.Attempt, ".log"), result: f.runPath(rec.SHA, rec.Attempt, ".result"),
		timeout: f.opts.CITimeout, grace: f.opts.CIGrace,
	}
	log, err := os.OpenFile(run.log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd := exec.Command(f.opts.Runner[0], append(slices.Clone(f.opts.Runner[1:]), run.args()...)...)
	// Not the work tree, which the runner removes: a process's directory
	// cannot be removed everywhere.
	cmd.Dir = f.bareDir
	cmd.Env = append(gitx.Environ(), "CI=true", "AGENTTREE_CI=1", "AGENTTREE_CI_SHA="+rec.SHA, runnerMark+"=1")
	cmd.Stdout, cmd.Stderr = log, log
	proc.Detach(cmd)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	// Reaped in the background: in a long-lived caller (the controller) a
	// finished runner would otherwise stay a zombie, which the liveness
	// check takes for alive. A short-lived caller exits first and leaves
	// the runner to init.
	go func() { _ = cmd.Wait() }()
	return cmd.Process.Pid, nil
}

// settle looks at a pending run: it records the result if the runner left
// one, and otherwise, if the runner is gone and mayRestart, starts it
// again or records the failure. The caller holds the commit's lock.
func (f *Forge) settle(ctx context.Context, rec *ciRecord, mayRestart bool) (*ciRecord, error) {
	// Liveness first: a runner publishes its result before it exits, so a
	// runner seen dead here has left any result it ever will.
	alive, why := f.runnerAlive(rec)
	if res, ok := readResult(f.runPath(rec.SHA, rec.Attempt, ".result")); ok {
		return f.finish(rec, res, "")
	}
	if alive || !mayRestart {
		return rec, nil
	}
	removeCIWorktree(ctx, f.bare, rec.Worktree)
	// A runner that died after CI but before publishing left the verdict.
	if res, ok := readResult(f.runPath(rec.SHA, rec.Attempt, ".result.tmp")); ok {
		return f.finish(rec, res, "")
	}
	lost := fmt.Sprintf("agenttree: the CI runner of attempt %d (pid %d) stopped without a result: %s", rec.Attempt, rec.PID, why)
	if rec.Restarts < maxCIRestarts {
		return f.startCI(ctx, rec.SHA, rec.Attempt+1, rec.Restarts+1, lost+"; running CI again")
	}
	return f.finish(rec, runResult{exit: -1, at: now()},
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
func (f *Forge) finish(rec *ciRecord, res runResult, lost string) (*ciRecord, error) {
	took := res.at.Sub(rec.StartedAt).Round(time.Millisecond)
	state, note := forge.CheckFailure, lost
	switch {
	case lost != "":
		rec.Note = lost
	case res.timedOut:
		state = forge.CheckTimedOut
		note = fmt.Sprintf("agenttree: CI timed out after %s and was stopped", f.opts.CITimeout)
	case res.exit == 0:
		state = forge.CheckSuccess
		note = fmt.Sprintf("agenttree: CI passed in %s", took)
	default:
		note = fmt.Sprintf("agenttree: CI failed (exit status %d) in %s", res.exit, took)
	}
	if err := f.finishLog(rec.SHA, rec.Attempt, note); err != nil {
		return nil, err
	}
	rec.State, rec.ExitCode, rec.CompletedAt, rec.PID, rec.Worktree = state, res.exit, res.at, 0, ""
	if err := f.writeCI(rec); err != nil {
		return nil, err
	}
	for _, ext := range []string{".result", ".result.tmp"} {
		_ = os.Remove(f.runPath(rec.SHA, rec.Attempt, ext))
	}
	return rec, nil
}
