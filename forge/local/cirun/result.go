package cirun

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Result is how a CI attempt ended, as its runner publishes it. On disk it
// is one line, "STATUS TIMEDOUT" (TIMEDOUT 0 or 1), followed by " WHY"
// when the run failed for its environment, and the file's modification
// time is when CI ended.
type Result struct {
	Exit     int       // the exit status as a shell reports it; 126: CI could not start
	TimedOut bool      // CI was stopped at the time limit
	At       time.Time // when CI ended
	// Environment says the run failed for its environment, not the
	// command's code: EnvStart or EnvSignal; "" otherwise.
	Environment string
	// Cancelled: the command was stopped by INT or TERM that the runner
	// did not send, as a person's Ctrl-C or kill does: no verdict on the
	// code, and no fault of the environment either.
	Cancelled bool
}

// Why a run failed for its environment.
const (
	// EnvStart: the command could not be started (its user, its shell).
	EnvStart = "start"
	// EnvSignal: the command was killed by a signal the runner did not
	// send and no person sends to stop a run (KILL, as the out-of-memory
	// killer sends; HUP, as a closing session does).
	EnvSignal = "signal"
	// cancelled marks a Result.Cancelled on disk, where EnvStart and
	// EnvSignal go.
	cancelled = "cancelled"
)

func (r Result) encode() []byte {
	timedOut := 0
	if r.TimedOut {
		timedOut = 1
	}
	why := r.Environment
	if r.Cancelled {
		why = cancelled
	}
	if why != "" {
		return fmt.Appendf(nil, "%d %d %s\n", r.Exit, timedOut, why)
	}
	return fmt.Appendf(nil, "%d %d\n", r.Exit, timedOut)
}

// unpublished is where a runner writes the result for path before it
// removes the work tree; renaming it to path publishes it.
func unpublished(path string) string { return path + ".tmp" }

// ReadResult reads the result published at path. It reports false when
// there is none, or none that can be read: the runner is not done.
func ReadResult(path string) (Result, bool) {
	fh, err := os.Open(path)
	if err != nil {
		return Result{}, false
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return Result{}, false
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return Result{}, false
	}
	fields := strings.Fields(string(data))
	env, cancel := "", false
	if len(fields) == 3 {
		switch fields[2] {
		case EnvStart, EnvSignal:
			fields, env = fields[:2], fields[2]
		case cancelled:
			fields, cancel = fields[:2], true
		}
	}
	if len(fields) != 2 {
		return Result{}, false
	}
	code, err1 := strconv.Atoi(fields[0])
	timedOut, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return Result{}, false
	}
	return Result{Exit: code, TimedOut: timedOut == 1, At: st.ModTime().UTC(), Environment: env, Cancelled: cancel}, true
}

// ReadUnpublished reads the result for path that a runner wrote but did
// not publish: it died after CI ended, before its work tree was gone. Only
// a runner known to be gone has its unpublished result read; a live one
// may still be writing it.
func ReadUnpublished(path string) (Result, bool) {
	return ReadResult(unpublished(path))
}

// RemoveResult removes the result for path, published or not.
func RemoveResult(path string) {
	_ = os.Remove(path)
	_ = os.Remove(unpublished(path))
}
