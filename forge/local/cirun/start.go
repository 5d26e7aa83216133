package cirun

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"

	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
)

// mark is in the environment of a process Start starts, and CI never
// gets it (codeenv.Environ passes no AGENTTREE_* variable of the
// runner's). A process that has it and is about to start a runner was
// started as one but did not act as one: a program that does not know
// Command (a test binary without localtest.RunnerMain) and went on as
// usual. Refusing stops it there instead of letting runners start
// runners.
const mark = "AGENTTREE_CI_RUNNER"

// Start starts a runner for a and returns its pid. runner is the program
// and its first arguments (agenttree and Command); a's arguments are
// appended. The runner is detached (proc.Detach: on Unix in a session of
// its own, on Windows in a process group of its own without a console),
// so that it outlives the caller and a Ctrl-C meant for the caller does
// not reach it. It runs in a.Bare (the work tree is removed under it)
// with this process's environment cleaned by gitx.Environ, of which CI
// gets only what a allows (Attempt.Env). Its own complaints go to
// a.LogFile, which must exist: that is where a person looks.
func Start(runner []string, a Attempt) (int, error) {
	if os.Getenv(mark) != "" {
		return 0, fmt.Errorf("%s was started as a local CI runner but did not act as one: the runner program (local.Options.Runner) must handle %q first "+
			"(a test binary: call localtest.RunnerMain in TestMain)", os.Args[0], Command)
	}
	if len(runner) == 0 {
		return 0, errors.New("no runner program to run CI with: name one, or leave local.Options.Runner empty for agenttree itself")
	}
	log, err := os.OpenFile(a.LogFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd := exec.Command(runner[0], append(slices.Clone(runner[1:]), a.Args()...)...)
	cmd.Dir = a.Bare
	cmd.Env = append(gitx.Environ(), mark+"=1")
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
