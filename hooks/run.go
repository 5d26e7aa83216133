package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	runDefaultTimeout = 30 * time.Second
	// runOutputCap bounds the output kept in memory; only the tail matters.
	runOutputCap = 64 << 10
	runTailLines = 20
	// runWaitDelay bounds the wait for the output pipe once the shell has
	// exited or been killed: a background grandchild may hold it open.
	runWaitDelay = 500 * time.Millisecond
)

var (
	// Phrased tightly enough that the output of failing tests about rate
	// limiting (test_rate_limit, TestUnauthorized) does not match. Checked
	// before auth: GitHub answers a secondary rate limit with 403.
	rateLimitRE = regexp.MustCompile(`(?i)rate[ -]?limit(?:ed| exceeded| reached)|(?:exceeded|reached|hit) (?:a |the |your )?(?:\w+ )?rate[ -]?limit|` +
		`too ?many ?requests|` + httpStatus("429"))
	authRE = regexp.MustCompile(`(?i)authentication failed|permission denied \(publickey|bad credentials|\bunauthori[sz]ed\b|` +
		`403 forbidden|could not read username|invalid username or password|requires authentication|` + httpStatus("401"))
)

// httpStatus matches a status code where it reads as one ("HTTP 401",
// "HTTP/2 401", "status code: 401", "error: 401"), not "401 tests passed".
func httpStatus(code string) string {
	return `(?:\bhttp(?:/[\d.]+)?|\bstatus(?: code)?|\berror|\bcode|\bresponse)\W{0,4}` + code + `\b`
}

// runCommand runs a shell command in the issue's work tree. It never waits
// longer than its timeout: the command runs in its own process group, the
// whole group is killed when time is up or the shell exits, and a process
// that escaped the group but keeps the output pipe open is cut off
// runWaitDelay after the shell exits.
func runCommand(ctx context.Context, c *Call) Outcome {
	command := c.Params.String("command", "")
	timeout := runTimeout(c)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = runDir(c.Issue)
	cmd.Env = append(os.Environ(),
		"AGENTTREE_ISSUE="+strconv.Itoa(c.Issue.ID),
		"AGENTTREE_STAGE="+c.Issue.Stage,
		"AGENTTREE_ISSUE_DIR="+absPath(c.Issue.Dir))
	out := &tailBuffer{max: runOutputCap}
	cmd.Stdout, cmd.Stderr = out, out // one writer: exec shares one pipe
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return os.ErrProcessDone
	}
	cmd.WaitDelay = runWaitDelay

	err := cmd.Run()
	if cmd.ProcessState != nil {
		// A hook leaves nothing running: whatever the shell started in the
		// background dies with it, unless it left the process group (setsid).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	tail := lastLines(out.String(), runTailLines)
	outputs := jsonOutputs(tail)
	status := exitStatus(cmd.ProcessState)
	outputs["exit_status"] = strconv.Itoa(status)
	outputs["output_tail"] = strings.Join(tail, "\n")

	if err == nil || (errors.Is(err, exec.ErrWaitDelay) && status == 0) {
		// ErrWaitDelay with status 0: the command succeeded and left a
		// background process holding its output.
		o := Pass()
		o.Outputs = outputs
		return o
	}
	var why, class string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why, class = "timed out", ClassTimeout
		if timeout > 0 {
			why += " after " + timeout.String()
		}
	case ctx.Err() != nil:
		why, class = "cancelled", ClassGeneral
	case cmd.ProcessState == nil:
		return Outcome{Kind: KindFail, Class: ClassGeneral, Outputs: outputs,
			Reason: fmt.Sprintf("command %q could not be started in %s: %v", command, cmd.Dir, err)}
	default:
		why, class = fmt.Sprintf("exit %d", status), classify(status, out.String())
	}
	reason := fmt.Sprintf("command %q failed (%s, %s)", command, why, class)
	if len(tail) == 0 {
		reason += " with no output"
	} else {
		reason += ":\n" + strings.Join(tail, "\n")
	}
	return Outcome{Kind: KindFail, Reason: reason, Class: class, Outputs: outputs}
}

// runTimeout is the `timeout` parameter; 0 means no limit of its own. When
// it is not set, the entry's common `timeout` option (already on ctx)
// replaces the default.
func runTimeout(c *Call) time.Duration {
	if d, ok := c.Params["timeout"].(time.Duration); ok {
		return d
	}
	if c.Entry != nil && c.Entry.Timeout > 0 {
		return c.Entry.Timeout
	}
	return runDefaultTimeout
}

// runDir is where commands run: the work tree, else the repository that
// holds the issue directory (<repo>/_agenttree/issues/NNN).
func runDir(i *Issue) string {
	if i.WorkDir != "" {
		return i.WorkDir
	}
	dir := absPath(i.Dir)
	for d := dir; d != ""; d = filepath.Dir(d) {
		if filepath.Base(d) == "_agenttree" {
			return filepath.Dir(d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return dir
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// exitStatus is the shell's exit status, 128+N for a kill by signal N, -1
// if it never ran.
func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// classify tells failures that may pass by themselves (timeouts, rate
// limits) and credential problems from the rest.
func classify(status int, output string) string {
	switch {
	case status == 124: // timeout(1)
		return ClassTimeout
	case rateLimitRE.MatchString(output):
		return ClassRateLimit
	case authRE.MatchString(output):
		return ClassAuth
	}
	return ClassGeneral
}

// jsonOutputs reads the outputs a command reports as a JSON object on its
// last non-empty line. Strings are kept as they are; anything else is kept
// as JSON.
func jsonOutputs(tail []string) map[string]string {
	out := map[string]string{}
	if len(tail) == 0 {
		return out
	}
	last := strings.TrimSpace(tail[len(tail)-1])
	if !strings.HasPrefix(last, "{") {
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(last), &obj) != nil {
		return out
	}
	for k, raw := range obj {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(raw)
		}
	}
	return out
}

// lastLines returns the last n non-blank-trailing lines of s.
func lastLines(s string, n int) []string {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n \t")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > b.max {
		p = p[len(p)-b.max:]
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return n, nil
}

func (b *tailBuffer) String() string { return string(bytes.ToValidUTF8(b.buf, nil)) }
