package main

import (
	"fmt"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// Exit codes: what a script or an agent's harness reads of a command
// (internal/exitcode documents each).
const (
	exitOK          = int(exitcode.OK)
	exitBlocked     = int(exitcode.Blocked)
	exitUsage       = int(exitcode.Usage)
	exitWaiting     = int(exitcode.Waiting)
	exitTimeout     = int(exitcode.Timeout)
	exitInterrupted = int(exitcode.Interrupted)
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// silentExit ends a command with a code after it printed its own output.
type silentExit int

func (s silentExit) Error() string { return fmt.Sprintf("exit %d", int(s)) }

// resultCode is the exit status of a transition: 0 moved or final,
// 1 blocked by a gate, stepped back, or moved with entry hooks unfinished,
// 3 waiting on a person or the controller (escalated included).
func resultCode(res *engine.Result) int {
	if len(res.Unfinished) > 0 && res.Status != engine.StatusWaiting {
		return exitBlocked
	}
	switch res.Status {
	case engine.StatusBlocked, engine.StatusSteppedBack:
		return exitBlocked
	case engine.StatusWaiting, engine.StatusEscalated:
		return exitWaiting
	}
	return exitOK
}
