// Package cirun is the local forge's CI runner: a process of its own that
// runs one CI attempt under a time limit and publishes how it ended. The
// forge starts it detached (Start), as agenttree's hidden subcommand
// Command, so that CI outlives the short-lived command that asked for it;
// the runner (Main) runs CI and leaves its result in a file the forge
// reads (ReadResult).
//
// What the two share is defined here once: the runner's command line
// (Attempt), the result file (Result) and the temporary work tree an
// attempt runs in (NewWorktree, RemoveWorktree).
package cirun

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Command is agenttree's hidden subcommand that runs one CI attempt
// (Main). Start appends an attempt's arguments to it.
const Command = "__ci-run"

// Attempt is one CI attempt as the forge hands it to its runner, on the
// runner's command line.
type Attempt struct {
	Bare       string        // the bare repository the work tree belongs to
	Worktree   string        // the attempt's checkout (NewWorktree), removed when CI is over
	LogFile    string        // CI's output is appended to it
	ResultFile string        // where the result is published (ReadResult)
	Timeout    time.Duration // the CI time limit
	Grace      time.Duration // between TERM and KILL at the time limit (Unix; Windows kills at once)
	Command    string        // run with sh -c in the work tree
	// User is the OS user the command runs as (`sandbox: user:NAME`),
	// its work tree handed over to it; empty: the runner's own user.
	User string
	// Env names the variables of the runner's environment the command
	// gets besides those every program needs (ci.env); Vars are
	// agenttree's own values for it ("NAME=value": CI=true, the commit).
	// It gets nothing else of the runner's environment (codeenv.Environ).
	Env, Vars []string
}

// Args is the command line that hands a to a runner: what follows
// Command.
func (a Attempt) Args() []string {
	args := []string{
		"--bare", a.Bare, "--worktree", a.Worktree, "--log", a.LogFile, "--result", a.ResultFile,
		"--timeout", a.Timeout.String(), "--grace", a.Grace.String(),
	}
	if a.User != "" {
		args = append(args, "--user", a.User)
	}
	for _, name := range a.Env {
		args = append(args, "--env", name)
	}
	for _, kv := range a.Vars {
		args = append(args, "--set", kv)
	}
	return append(args, "--", a.Command)
}

// parseAttempt reads what Args wrote. Flag errors go to stderr as well.
func parseAttempt(args []string, stderr io.Writer) (Attempt, error) {
	var a Attempt
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&a.Bare, "bare", "", "the bare `repository` the work tree belongs to")
	fs.StringVar(&a.Worktree, "worktree", "", "the `directory` CI runs in, removed afterwards")
	fs.StringVar(&a.LogFile, "log", "", "the `file` CI's output is appended to")
	fs.StringVar(&a.ResultFile, "result", "", "the `file` the result is published as")
	fs.DurationVar(&a.Timeout, "timeout", 0, "the CI time limit")
	fs.DurationVar(&a.Grace, "grace", 0, "how long CI has between TERM and KILL at the limit (Unix)")
	fs.StringVar(&a.User, "user", "", "the OS `user` CI runs as (default: the runner's)")
	fs.Func("env", "a `name` of the runner's environment variables CI gets (repeatable)", func(name string) error {
		a.Env = append(a.Env, name)
		return nil
	})
	fs.Func("set", "a variable CI gets, as `NAME=value` (repeatable)", func(kv string) error {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("want NAME=value, got %q", kv)
		}
		a.Vars = append(a.Vars, kv)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return a, err
	}
	if fs.NArg() != 1 {
		return a, fmt.Errorf("want one CI command after the flags, got %d arguments", fs.NArg())
	}
	a.Command = fs.Arg(0)
	for _, required := range []struct{ name, value string }{
		{"bare", a.Bare}, {"worktree", a.Worktree}, {"log", a.LogFile}, {"result", a.ResultFile},
	} {
		if required.value == "" {
			return a, fmt.Errorf("--%s is required", required.name)
		}
	}
	if a.Timeout <= 0 {
		return a, errors.New("--timeout must be above zero")
	}
	return a, nil
}
