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

	"github.com/agenttree/agenttree/stages"
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
// runWaitDelay after the shell exits. With `must_pass: false` (the earlier
// tool's spelling of `optional`) a failure is only a warning.
func runCommand(ctx context.Context, c *Call) Outcome {
	o := runShell(ctx, c)
	if o.Kind == KindFail && !c.Params.Bool("must_pass", true) {
		return Outcome{Kind: KindPass, Outputs: o.Outputs, Warnings: append(o.Warnings, "run (must_pass: false) failed: "+o.Reason)}
	}
	return o
}

func runShell(ctx context.Context, c *Call) Outcome {
	command, err := renderCommand(c.Params.String("command", ""), c.Issue.MessageVars())
	if err != nil {
		return Failf("%s", err)
	}
	timeout := runTimeout(c)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	dir, err := issueWorkTree(ctx, c.Issue)
	if err != nil {
		return Failf("run %q: %v", command, err)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
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

	err = cmd.Run()
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

// renderCommand fills the command's {{placeholders}} with the issue's
// values, each quoted for where it stands in the command, so that nothing in
// a value (an issue title, say) is ever read by the shell as code.
func renderCommand(tmpl string, vars map[string]string) (string, error) {
	var refused []string
	out := stages.Expand(tmpl, func(name, prefix string) string {
		v := vars[name]
		ctx, escaped := shellContext(prefix)
		lead := ""
		if escaped {
			// A backslash before the placeholder would escape the quote
			// that opens the value; escaping a backslash instead keeps the
			// quoting whole.
			lead = `\`
		}
		switch ctx {
		case shUnquoted:
			return lead + shellQuote(v)
		case shSingle:
			return strings.ReplaceAll(v, "'", `'\''`)
		case shDouble:
			return lead + `"` + shellQuote(v) + `"`
		case shComment:
			return strings.NewReplacer("\n", " ", "\r", " ").Replace(v)
		}
		refused = append(refused, "{{"+name+"}}")
		return ""
	})
	if len(refused) > 0 {
		return "", fmt.Errorf("command %q: %s cannot be quoted safely where it stands (inside `...`, ${...} or $'...', or after a here-document's <<); "+
			"move it to a plain argument, e.g. `printf '%%s\\n' {{%s}} | ...`", tmpl, strings.Join(refused, ", "), strings.Trim(refused[0], "{}"))
	}
	return out, nil
}

// shellQuote makes s one shell word that means exactly s.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Where a placeholder stands in a shell command.
type shellCtx int

const (
	shUnquoted shellCtx = iota
	shSingle
	shDouble
	shComment
	// shRefused: inside `...`, ${...} or $'...', or after a here-document
	// operator, where no quoting of a value is reliably inert.
	shRefused
)

// shellContext reads the POSIX sh quoting of prefix and says where the text
// after it stands, and whether a backslash escapes its first character.
// A command substitution $(...) starts a fresh context, even inside double
// quotes.
func shellContext(prefix string) (ctx shellCtx, escaped bool) {
	type frame struct {
		// 0: top level; '(' $(...); '`' `...`; '"'; '\''; '{' ${...};
		// '$' $'...'
		kind   byte
		nested int // unclosed ( inside $(...), { inside ${...}
	}
	stack := []frame{{}}
	push := func(kind byte) { stack = append(stack, frame{kind: kind}) }
	pop := func() { stack = stack[:len(stack)-1] }
	comment, wordStart := false, true
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		top := &stack[len(stack)-1]
		next := byte(0)
		if i+1 < len(prefix) {
			next = prefix[i+1]
		}
		switch {
		case comment:
			if c == '\n' {
				comment, wordStart = false, true
			}
			continue
		case top.kind == '\'':
			if c == '\'' {
				pop()
			}
			continue
		case top.kind == '$':
			if c == '\\' {
				i++
			} else if c == '\'' {
				pop()
			}
			continue
		case top.kind == '{':
			if c == '{' {
				top.nested++
			} else if c == '}' && top.nested > 0 {
				top.nested--
			} else if c == '}' {
				pop()
			}
			continue
		case top.kind == '"':
			switch {
			case c == '\\' && next == 0:
				return shDouble, true
			case c == '\\':
				i++
			case c == '"':
				pop()
			case c == '`':
				push('`')
				wordStart = true
			case c == '$' && next == '(':
				push('(')
				i++
				wordStart = true
			case c == '$' && next == '{':
				push('{')
				i++
			}
			continue
		}
		// Unquoted: the top level, or inside a command substitution.
		start := false
		switch {
		case c == '\\' && next == 0:
			return shUnquoted, true
		case c == '\\':
			i++
		case c == '\'':
			push('\'')
		case c == '"':
			push('"')
		case c == '`' && top.kind == '`':
			pop()
		case c == '`':
			push('`')
			start = true
		case c == '$' && (next == '(' || next == '{' || next == '\''):
			push(map[byte]byte{'(': '(', '{': '{', '\'': '$'}[next])
			i++
			start = next == '('
		case c == '<' && next == '<':
			// Everything after a here-document operator is refused rather
			// than parsed: the body has quoting rules of its own, and a value
			// holding the delimiter line would end it early.
			return shRefused, false
		case c == '(' && top.kind == '(':
			top.nested++
			start = true
		case c == ')' && top.kind == '(' && top.nested > 0:
			top.nested--
		case c == ')' && top.kind == '(':
			pop()
		case c == '#' && wordStart:
			comment = true
		default:
			start = strings.IndexByte(" \t\n;&|()<>", c) >= 0
		}
		wordStart = start
	}
	for _, f := range stack {
		if f.kind == '`' {
			// The shell strips backslashes inside `...` before parsing it,
			// and a backquote in the value would end it early.
			return shRefused, false
		}
	}
	if comment {
		return shComment, false
	}
	switch stack[len(stack)-1].kind {
	case '\'':
		return shSingle, false
	case '"':
		return shDouble, false
	case '{', '$':
		return shRefused, false
	}
	return shUnquoted, false
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
// issueWorkTree is where the issue's code is checked out: the work tree the
// command runs in when it is on the issue's branch, else the linked
// worktree that has the branch. A gate must test the issue's code, never
// whatever another branch happens to hold.
func issueWorkTree(ctx context.Context, i *Issue) (string, error) {
	dir := runDir(i)
	if i.Branch == "" {
		return dir, nil
	}
	if err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--git-dir").Run(); err != nil {
		return dir, nil // not a git work tree: nothing to match
	}
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "symbolic-ref", "--quiet", "--short", "HEAD").Output()
	if err != nil {
		out = []byte("(detached HEAD: a rebase in progress?)")
	}
	if strings.TrimSpace(string(out)) == i.Branch {
		return dir, nil
	}
	list, err := exec.CommandContext(ctx, "git", "-C", dir, "worktree", "list", "--porcelain").Output()
	if err == nil {
		path := ""
		for _, line := range strings.Split(string(list), "\n") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				path = p
			}
			if line == "branch refs/heads/"+i.Branch {
				return path, nil
			}
		}
	}
	return "", fmt.Errorf("%s is on branch %s, and no worktree has issue %d's branch %s checked out; check it out (`git switch %s`, or `git worktree add ../%s %s`) so its gates test its code",
		dir, strings.TrimSpace(string(out)), i.ID, i.Branch, i.Branch, i.Branch, i.Branch)
}

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
