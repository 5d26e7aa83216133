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
}

// Why a run failed for its environment.
const (
	// EnvStart: the command could not be started (its user, its shell).
	EnvStart = "start"
	// EnvSignal: the command was killed by a signal the runner did not
	// send (the out-of-memory killer, a shutdown, a person).
	EnvSignal = "signal"
)

func (r Result) encode() []byte {
	timedOut := 0
	if r.TimedOut {
		timedOut = 1
	}
	if r.Environment != "" {
		return fmt.Appendf(nil, "%d %d %s\n", r.Exit, timedOut, r.Environment)
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
	env := ""
	if len(fields) == 3 && (fields[2] == EnvStart || fields[2] == EnvSignal) {
		fields, env = fields[:2], fields[2]
	}
	if len(fields) != 2 {
		return Result{}, false
	}
	code, err1 := strconv.Atoi(fields[0])
	timedOut, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return Result{}, false
	}
	return Result{Exit: code, TimedOut: timedOut == 1, At: st.ModTime().UTC(), Environment: env}, true
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
