package cirun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"

	"github.com/agenttree/agenttree/internal/codeenv"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
)

// Main is the runner: it runs the attempt args describe (what follows
// Command on the command line Start made) and returns the process's exit
// status: 0 once the result is published, 1 when there is none, 2 for
// arguments it cannot use.
//
// The CI command runs with `sh -c` in the attempt's work tree, its output
// appended to the attempt's log, with the attempt's environment (what
// every program needs, the variables it names, its own values) and none
// of the rest of the runner's; with a user (`sandbox: user:NAME`), as
// that user, in a work tree handed over to it, while the runner stays the
// host's to write the result. At the time limit its whole process
// group gets TERM, and KILL after the grace; what it leaves running when
// it ends is killed too. The runner then writes the result (whose
// modification time is when CI ended), removes the work tree, and
// publishes the result by renaming it: a published result means the run
// left nothing behind. Cancelling ctx (the runner is told to stop) stops
// CI the same way but publishes nothing, so the forge runs CI again.
//
// On Windows, which has neither TERM nor process groups to kill (see
// package proc), the shell is killed at the limit without a grace, and
// what it started may outlive the run and hold files in the work tree.
func Main(ctx context.Context, args []string, stderr io.Writer) int {
	a, err := parseAttempt(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agenttree %s: %v; the local forge starts this command itself, with the arguments it needs\n", Command, err)
		return 2
	}
	if err := a.run(ctx); err != nil {
		fmt.Fprintf(stderr, "agenttree %s: CI in %s: %v\n", Command, a.Worktree, err)
		return 1
	}
	return 0
}

func (a Attempt) run(ctx context.Context) error {
	res, err := a.execute(ctx)
	tmp := unpublished(a.ResultFile)
	if err == nil {
		if werr := os.WriteFile(tmp, res.encode(), 0o644); werr != nil {
			err = fmt.Errorf("record the result: %w", werr)
		}
	}
	RemoveWorktree(ctx, &gitx.Repo{Dir: a.Bare}, a.Worktree)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, a.ResultFile); err != nil {
		return fmt.Errorf("publish the result: %w", err)
	}
	return nil
}

// execute runs the CI command and says how it ended. Stopped by ctx
// rather than by the time limit, CI has no verdict: that is an error.
func (a Attempt) execute(ctx context.Context) (Result, error) {
	out, err := os.OpenFile(a.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return Result{}, fmt.Errorf("open the CI log: %w", err)
	}
	defer out.Close()
	limited, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	cmd := exec.CommandContext(limited, "sh", "-c", a.Command)
	cmd.Dir = a.Worktree
	// The command is the agents' code: it gets an allowlist of the
	// runner's environment, which is the controller's and holds its
	// credentials (docs/SECURITY.md).
	cmd.Env = codeenv.Environ(os.Environ(), a.Env, a.Vars)
	cmd.Stdout, cmd.Stderr = out, out
	if err := a.runAsUser(cmd); err != nil {
		fmt.Fprintf(out, "agenttree: cannot run CI in %s: %v\n", a.Worktree, err)
		return Result{Exit: 126, Environment: EnvStart}, nil
	}
	proc.GroupGraceful(cmd)
	cmd.WaitDelay = a.Grace
	// Cancel runs only when the limit (or ctx) came before CI ended, which
	// tells a timeout from a run that ended just as the limit passed.
	var stopped atomic.Bool
	terminate := cmd.Cancel
	cmd.Cancel = func() error {
		stopped.Store(true)
		return terminate()
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "agenttree: cannot run CI in %s: %v\n", a.Worktree, err)
		return Result{Exit: 126, Environment: EnvStart}, nil
	}
	_ = cmd.Wait() // the exit status says all
	_ = proc.KillGroup(cmd)
	if stopped.Load() && ctx.Err() != nil {
		return Result{}, fmt.Errorf("stopped before CI finished: %w", context.Cause(ctx))
	}
	res := Result{Exit: proc.ExitStatus(cmd.ProcessState), TimedOut: stopped.Load()}
	if sig, ok := outsideKill(cmd.ProcessState); ok && !res.TimedOut {
		if sig == syscall.SIGINT || sig == syscall.SIGTERM {
			fmt.Fprintf(out, "agenttree: CI was cancelled: stopped by signal %d (%s), which the CI runner did not send\n", int(sig), sig)
			res.Cancelled = true
		} else {
			fmt.Fprintf(out, "agenttree: CI was killed by signal %d (%s), which the CI runner did not send\n", int(sig), sig)
			res.Environment = EnvSignal
		}
	}
	return res, nil
}

// outsideKill reports the signal that killed the command when it is one
// that stops a process from outside (KILL, as the out-of-memory killer
// sends, or HUP: the environment's failure; TERM or INT, as a person
// stopping the run does: a cancelled run), not one a program's own crash
// raises (SEGV, ABRT), which is the code's failure.
func outsideKill(ps *os.ProcessState) (syscall.Signal, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	switch sig := ws.Signal(); sig {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT:
		return sig, true
	}
	return 0, false
}
