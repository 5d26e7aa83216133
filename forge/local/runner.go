package local

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
)

// RunnerCommand is agenttree's hidden subcommand that runs one CI attempt
// (RunCI). The forge starts Options.Runner, by default this executable
// with RunnerCommand, with the attempt's flags and CI command appended.
const RunnerCommand = "__ci-run"

// runnerMark is in the environment of a process the forge starts as a CI
// runner, and RunCI keeps it from CI. A process that has it and is about
// to start a runner was started as one but did not act as one: a program
// that does not know RunnerCommand (a test binary without
// localtest.RunnerMain) and went on as usual. Refusing stops it there
// instead of letting runners start runners.
const runnerMark = "AGENTTREE_CI_RUNNER"

// ciTempPrefix names the temporary directory of a CI checkout; nothing
// else is ever removed as one.
const ciTempPrefix = "agenttree-ci-"

// ciRun is one CI attempt as the forge hands it to its runner, on the
// runner's command line.
type ciRun struct {
	bare     string // the bare repository the work tree belongs to
	worktree string // the attempt's checkout, removed when CI is over
	log      string // the attempt's log; CI's output is appended
	result   string // where the result is published
	timeout  time.Duration
	grace    time.Duration // between TERM and KILL at the time limit
	command  string        // run with sh -c
}

func (r ciRun) args() []string {
	return []string{
		"--bare", r.bare, "--worktree", r.worktree, "--log", r.log, "--result", r.result,
		"--timeout", r.timeout.String(), "--grace", r.grace.String(), "--", r.command,
	}
}

func parseCIRun(args []string, stderr io.Writer) (ciRun, error) {
	var r ciRun
	fs := flag.NewFlagSet(RunnerCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&r.bare, "bare", "", "the bare `repository` the work tree belongs to")
	fs.StringVar(&r.worktree, "worktree", "", "the `directory` CI runs in, removed afterwards")
	fs.StringVar(&r.log, "log", "", "the `file` CI's output is appended to")
	fs.StringVar(&r.result, "result", "", "the `file` the result is published as")
	fs.DurationVar(&r.timeout, "timeout", 0, "the CI time limit")
	fs.DurationVar(&r.grace, "grace", 0, "how long CI has between TERM and KILL at the limit")
	if err := fs.Parse(args); err != nil {
		return r, err
	}
	if fs.NArg() != 1 {
		return r, fmt.Errorf("want one CI command after the flags, got %d arguments", fs.NArg())
	}
	r.command = fs.Arg(0)
	for _, required := range []struct{ name, value string }{
		{"bare", r.bare}, {"worktree", r.worktree}, {"log", r.log}, {"result", r.result},
	} {
		if required.value == "" {
			return r, fmt.Errorf("--%s is required", required.name)
		}
	}
	if r.timeout <= 0 {
		return r, errors.New("--timeout must be above zero")
	}
	return r, nil
}

// RunCI is the local forge's CI runner: it runs one CI attempt, as
// described by args (what follows RunnerCommand on the command line the
// forge made), and returns the process's exit status. The forge starts
// it detached, so that CI outlives the command that asked for it.
//
// The CI command runs with `sh -c` in the attempt's work tree, its output
// appended to the attempt's log. At the time limit its whole process
// group gets TERM, and KILL after the grace; what it leaves running when
// it ends is killed too. The runner then writes the result beside the log
// (result.tmp, whose modification time is when CI ended), removes the
// work tree, and publishes the result by renaming it: a published result
// means the run left nothing behind. Cancelling ctx (the runner is told
// to stop) stops CI the same way but publishes nothing, so the forge runs
// CI again.
func RunCI(ctx context.Context, args []string, stderr io.Writer) int {
	run, err := parseCIRun(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agenttree %s: %v; the local forge starts this command itself, with the arguments it needs\n", RunnerCommand, err)
		return 2
	}
	if err := run.run(ctx); err != nil {
		fmt.Fprintf(stderr, "agenttree %s: CI in %s: %v\n", RunnerCommand, run.worktree, err)
		return 1
	}
	return 0
}

func (r ciRun) run(ctx context.Context) error {
	res, err := r.execute(ctx)
	tmp := r.result + ".tmp"
	if err == nil {
		if werr := os.WriteFile(tmp, res.encode(), 0o644); werr != nil {
			err = fmt.Errorf("record the result: %w", werr)
		}
	}
	removeCIWorktree(context.WithoutCancel(ctx), &gitx.Repo{Dir: r.bare}, r.worktree)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, r.result); err != nil {
		return fmt.Errorf("publish the result: %w", err)
	}
	return nil
}

// execute runs the CI command and says how it ended. Stopped by ctx
// rather than by the time limit, CI has no verdict: that is an error.
func (r ciRun) execute(ctx context.Context) (runResult, error) {
	out, err := os.OpenFile(r.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return runResult{}, fmt.Errorf("open the CI log: %w", err)
	}
	defer out.Close()
	limited, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(limited, "sh", "-c", r.command)
	cmd.Dir = r.worktree
	cmd.Env = withoutRunnerMark(os.Environ())
	cmd.Stdout, cmd.Stderr = out, out
	proc.GroupGraceful(cmd)
	cmd.WaitDelay = r.grace
	// Cancel runs only when the limit (or ctx) came before CI ended, which
	// tells a timeout from a run that ended just as the limit passed.
	var stopped atomic.Bool
	terminate := cmd.Cancel
	cmd.Cancel = func() error {
		stopped.Store(true)
		return terminate()
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "agenttree: cannot run CI in %s: %v\n", r.worktree, err)
		return runResult{exit: 126}, nil
	}
	_ = cmd.Wait() // the exit status says all
	_ = proc.KillGroup(cmd)
	if stopped.Load() && ctx.Err() != nil {
		return runResult{}, fmt.Errorf("stopped before CI finished: %w", context.Cause(ctx))
	}
	return runResult{exit: proc.ExitStatus(cmd.ProcessState), timedOut: stopped.Load()}, nil
}

func withoutRunnerMark(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, runnerMark+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// removeCIWorktree removes a CI checkout and forgets it in bare. It
// touches only what startCI makes (a src directory in a temporary
// directory named ciTempPrefix*), whatever a hand-edited record or
// command line says.
func removeCIWorktree(ctx context.Context, bare *gitx.Repo, wt string) {
	tmp := filepath.Dir(wt)
	if wt == "" || filepath.Base(wt) != "src" || !strings.HasPrefix(filepath.Base(tmp), ciTempPrefix) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_ = bare.WorktreeRemove(ctx, wt)
	_ = os.RemoveAll(tmp)
	_ = bare.WorktreePrune(ctx)
}
