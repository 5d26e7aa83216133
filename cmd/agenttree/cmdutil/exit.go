package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// ExitError carries an exit code out of a command.
type ExitError struct {
	Code exitcode.Code
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// SilentExit ends a command with a code after it printed its own output.
type SilentExit int

func (s SilentExit) Error() string { return fmt.Sprintf("exit %d", int(s)) }

// ResultCode is the exit status of a transition (report.Code).
func ResultCode(res *engine.Result) exitcode.Code { return report.Code(res) }

// ExitCode is the exit status a command's error ends it with.
func ExitCode(err error) int {
	var se SilentExit
	var ee *ExitError
	var ae *api.Error
	var unavailable *api.Unavailable
	switch {
	case errors.As(err, &se):
		return int(se)
	case errors.As(err, &ee):
		return int(ee.Code)
	case errors.As(err, &ae):
		return ae.ExitCode
	case errors.As(err, &unavailable):
		return int(exitcode.Waiting) // a person starts the controller
	case errors.Is(err, context.Canceled):
		return int(exitcode.Interrupted) // Ctrl-C, even while waiting for a lock
	case errors.Is(err, atomicfile.ErrLocked):
		return int(exitcode.Waiting) // nothing changed; another process has the issue
	case atomicfile.DiskTrouble(err):
		return int(exitcode.Waiting) // nothing changed; a person frees space or makes the disk writable
	case errors.As(err, new(*issues.TamperedError)):
		return int(exitcode.Waiting) // nothing changed; a person verifies and repairs
	}
	return int(exitcode.Usage)
}
