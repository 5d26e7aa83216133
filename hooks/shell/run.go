// Package shell holds `run`, the hook that runs a shell command in the
// issue's work tree and turns its exit status and output into an outcome.
//
// Issue values never become shell text. The command is given to `sh -c` as
// written, except that each {{name}} placeholder is replaced by a
// reference to an environment variable holding the value:
// $AGENTTREE_<NAME> for the issue's own variables (AGENTTREE_ISSUE_ID,
// AGENTTREE_ISSUE_TITLE, AGENTTREE_STAGE, AGENTTREE_FLOW,
// AGENTTREE_BRANCH, AGENTTREE_LABELS, AGENTTREE_PR_NUMBER,
// AGENTTREE_PR_URL, AGENTTREE_HEAD_SHA, always set) and
// $AGENTTREE_VAR_<NAME> for the outputs of earlier hooks and the issue's
// vars (set for the placeholders the command uses). Every command also
// gets AGENTTREE_ISSUE (the id), AGENTTREE_STAGE and AGENTTREE_ISSUE_DIR.
// Of agenttree's own environment it gets only what every program needs
// and the names its `env` lists (codeenv.Environ): never the person's
// credentials. It runs as the agents' OS user under `sandbox: user:NAME`
// (HostUser), with that user's HOME, USER and LOGNAME.
//
// A placeholder is one word wherever the shell expands it. Where it would
// not (single quotes, a here-document with a quoted delimiter, after a
// backslash or a `$`) or where the shell would read the value as code or
// as a name after all (arithmetic and declare -i, the operands of -eq ...
// in bash's [[ ]], a variable name, the script of eval, trap, alias or
// sh -c, what a shell reads from a here-document or a pipe), the command
// is refused, when the config is loaded and again before it runs: a shell
// parser (mvdan.cc/sh) reads the command to find where each placeholder
// stands.
package shell

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/codeenv"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/stages"
)

const (
	// outputCap bounds the output kept in memory; only the tail matters.
	outputCap = 64 << 10
	tailLines = 20
	// waitDelay bounds the wait for the output pipe once the shell has
	// exited or been killed: a background grandchild may hold it open.
	waitDelay = 500 * time.Millisecond
	// agentTimeout is the time limit of a command at an agent's stage
	// unless the config sets one: the agent's `agenttree next` waits for
	// it.
	agentTimeout = 30 * time.Second
)

var (
	commandParam = hooks.Template("command",
		"the shell command (sh -c), run in the issue's work tree; {{name}} stands for $AGENTTREE_NAME (issue variables) "+
			"or $AGENTTREE_VAR_NAME (outputs), one word, never code; refused where the shell would not expand it (single quotes) "+
			"or would read the value as code or a name (arithmetic, [[ -eq ]], eval, sh -c, sh <<EOF, | sh, read NAME)").Required()
	timeoutParam = hooks.Duration("timeout",
		"how long the command may run (0: no limit of its own); unset: the entry's `timeout`, else, at a stage the controller runs "+
			"(`host: controller`), ci_polling.timeout_s (a script there may wait for CI itself), else 30s (an agent's gate waits for it)").Default(agentTimeout)
	outputsParam = hooks.List("outputs", "the keys the command reports in a JSON object, the last one in its output (on one line or pretty-printed), "+
		"as outputs for later hooks")
	mustPassParam = hooks.Bool("must_pass", "false makes a failure a warning (the earlier tool's spelling of `optional`)").Default(true)
	envParam      = hooks.EnvNames("env",
		"names of variables of the controller's environment to pass to the command; of that environment it gets only these and "+
			"PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TMPDIR and TZ. Every agent can read what it gets: list no credentials")
)

// Defs are the shell hooks.
func Defs() []hooks.Def {
	return []hooks.Def{
		{HookSpec: stages.HookSpec{Name: "run", Main: "command",
			Params:  hooks.Specs(commandParam, timeoutParam, outputsParam, mustPassParam, envParam),
			Outputs: []string{"exit_status", "output_tail"}, OutputsParam: outputsParam.Name(), Check: checkParams,
			Doc: "Runs a shell command in the issue's work tree and passes when it exits 0. Its exit status, the tail of its output " +
				"and the keys of the last JSON object it prints (on one line or pretty-printed, whatever follows it) become outputs; " +
				"output that looks like a JSON object but is none is warned of. {{placeholders}} reach it as environment variables, never as code. " +
				"Unless `timeout` says otherwise it may run 30s at an agent's stage, and ci_polling.timeout_s at a stage the controller runs, " +
				"where a script may wait for CI itself.",
			Example: "- run: {command: go test ./..., timeout: 600}"}, Run: run},
	}
}

// run runs a shell command in the issue's work tree, as the sandbox's
// user when the config names one (HostUser). It never waits longer than
// its timeout: the command runs in its own process group, the whole group
// is killed when time is up or the shell exits (on Windows only the
// shell: see package proc), and a process that escaped the group but
// keeps the output pipe open is cut off waitDelay after the shell exits.
// With `must_pass: false` a failure is only a warning.
func run(ctx context.Context, c *hooks.Call) hooks.Outcome {
	o := runShell(ctx, c)
	if o.Kind == hooks.KindFail && !mustPassParam.Get(c) {
		return hooks.Outcome{Kind: hooks.KindPass, Outputs: o.Outputs, Warnings: append(o.Warnings, "run (must_pass: false) failed: "+o.Reason)}
	}
	return o
}

func runShell(ctx context.Context, c *hooks.Call) hooks.Outcome {
	command := commandParam.Get(c)
	text, env, err := Script(command, c.Issue)
	if err != nil {
		return hooks.Failf("command %q: %v", command, err)
	}
	timeout := runTimeout(c)
	if timeout.d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout.d)
		defer cancel()
	}
	user, err := HostUser(c.Settings().Sandbox)
	if err != nil {
		return hooks.FailAs(hooks.ClassConfig, "run %q: %v", command, err)
	}
	dir, err := issueWorkTree(ctx, c.Issue, c.Settings().WorktreesDir(), user)
	if err != nil {
		return hooks.Failf("run %q: %v", command, err)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", text)
	cmd.Dir = dir
	// The command is the agents' code: it gets an allowlist of this
	// process's environment, which holds the person's credentials
	// (docs/SECURITY.md).
	cmd.Env = codeenv.Environ(gitx.Environ(), envParam.Get(c), env)
	if err := runAs(cmd, user); err != nil {
		return hooks.FailAs(hooks.ClassConfig, "run %q: %v", command, err)
	}
	out := &tailBuffer{max: outputCap}
	cmd.Stdout, cmd.Stderr = out, out // one writer: exec shares one pipe
	proc.Group(cmd)
	cmd.WaitDelay = waitDelay

	err = cmd.Run()
	if cmd.ProcessState != nil {
		// A hook leaves nothing running: whatever the shell started in the
		// background dies with it, unless it left the process group (setsid).
		_ = proc.KillGroup(cmd)
	}
	return outcome(ctx, command, cmd, err, timeout, out.String())
}

// outcome reads how the command ended.
func outcome(ctx context.Context, command string, cmd *exec.Cmd, err error, timeout limit, output string) hooks.Outcome {
	tail := lines.Last(output, tailLines)
	outputs, warnings := jsonOutputs(output)
	status := proc.ExitStatus(cmd.ProcessState)
	outputs["exit_status"] = strconv.Itoa(status)
	outputs["output_tail"] = strings.Join(tail, "\n")

	if err == nil || (errors.Is(err, exec.ErrWaitDelay) && status == 0) {
		// ErrWaitDelay with status 0: the command succeeded and left a
		// background process holding its output.
		o := hooks.Pass()
		o.Outputs, o.Warnings = outputs, warnings
		return o
	}
	var why string
	var class hooks.Class
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why, class = "timed out", hooks.ClassTimeout
		if timeout.d > 0 {
			why += " after " + timeout.d.String()
		}
	case ctx.Err() != nil:
		why, class = "cancelled", hooks.ClassGeneral
	case cmd.ProcessState == nil:
		o := hooks.Failf("command %q could not be started in %s: %v", command, cmd.Dir, err)
		o.Outputs, o.Warnings = outputs, warnings
		return o
	default:
		why, class = fmt.Sprintf("exit %d", status), classify(status, output)
	}
	reason := fmt.Sprintf("command %q failed (%s, %s)", command, why, class)
	if len(tail) == 0 {
		reason += " with no output"
	} else {
		reason += ":\n" + strings.Join(tail, "\n")
	}
	if class == hooks.ClassTimeout && timeout.d > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason += "\n" + timeout.advice()
	}
	return hooks.Outcome{Kind: hooks.KindFail, Reason: reason, Class: class, Outputs: outputs, Warnings: warnings}
}

// limit is how long a command may run (0: no limit of its own), and what
// set it, for the message of a command that ran out of it.
type limit struct {
	d   time.Duration
	by  string
	pos stages.Pos
}

// runTimeout is the `timeout` parameter. When it is not set, the entry's
// common `timeout` option (already on ctx) replaces the default, which
// depends on who waits for the command (docs/CONFIG.md, `run`): at a
// stage the controller runs, ci_polling.timeout_s, as long as CI may take,
// because a script there may wait for CI itself; elsewhere 30s, because
// an agent's `agenttree next` waits for it.
func runTimeout(c *hooks.Call) limit {
	l := limit{}
	if c.Entry != nil {
		l.pos = c.Entry.Pos
	}
	if d, ok := timeoutParam.Lookup(c); ok {
		l.d, l.by = d, "its `timeout`"
		return l
	}
	if c.Entry != nil && c.Entry.Timeout > 0 {
		l.d, l.by = c.Entry.Timeout, "its `timeout`"
		return l
	}
	if node, ok := c.Settings().Node(c.Issue.Stage); ok && node.Controller() {
		l.d, l.by = c.Settings().CIPolling.Timeout, "ci_polling.timeout_s, the default at a stage the controller runs"
		return l
	}
	l.d, l.by = timeoutParam.Get(c), "the default at a stage an agent works in"
	return l
}

// advice says what to do about a command that ran out of time.
func (l limit) advice() string {
	where := "on the hook"
	if l.pos.File != "" {
		where += " (" + l.pos.String() + ")"
	}
	return fmt.Sprintf("The limit was %s (%s). If the command needs longer (a script that waits for CI itself), set `timeout:` %s, "+
		"e.g. `- run: {command: ..., timeout: 30m}`; 0 means no limit of its own.", l.d, l.by, where)
}
