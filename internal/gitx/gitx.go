// Package gitx runs git for agenttree: every command has a timeout, never
// waits on a terminal, and fails with an error that names the command and
// what git said.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/codeenv"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/proc"
)

// DefaultRemote is the remote agenttree fetches from and pushes to when
// nothing names another: the one `git clone` makes.
const DefaultRemote = "origin"

// DefaultTimeout bounds one git command when Repo.Timeout is zero. It is
// generous because fetch and push talk to remotes.
const DefaultTimeout = 2 * time.Minute

// Errors callers tell apart with errors.Is.
var (
	// ErrNoRef: the ref or revision does not exist.
	ErrNoRef = errors.New("no such ref")
	// ErrNoRemote: the repository has no remote of that name.
	ErrNoRemote = errors.New("no such remote")
	// ErrNotRepository: the directory is in no git repository. A failed
	// command's *Error matches it when git said so.
	ErrNotRepository = errors.New("not a git repository")
	// ErrDetached: HEAD is not on a branch.
	ErrDetached = errors.New("HEAD is detached")
	// ErrLeaseRejected: a --force-with-lease push found the remote branch
	// somewhere other than expected; someone else pushed.
	ErrLeaseRejected = errors.New("push rejected: the remote branch moved (stale lease)")
	// ErrPushRejected: the remote refused a push for another reason
	// (not a fast-forward, a hook declined it).
	ErrPushRejected = errors.New("push rejected")
	// ErrRefMoved: update-ref found the ref at a value other than the
	// expected old one.
	ErrRefMoved = errors.New("ref moved")
)

// Repo is a git repository (a work tree or a bare repository) at Dir.
type Repo struct {
	Dir string
	// Timeout bounds each command; zero means DefaultTimeout. A deadline
	// on the caller's context applies as well.
	Timeout time.Duration
	// Env is added to every command's environment (identity, GIT_CONFIG_*).
	Env []string
	// As, when set, runs git as that OS user (needs root), with its HOME:
	// how the host touches a repository an agent of another user owns,
	// so that what the repository's config and hooks run, runs as the
	// agent (docs/SECURITY.md). nil: this process's user.
	As *proc.User
}

// Open returns the repository containing dir, or an error saying how to
// make one.
func Open(ctx context.Context, dir string) (*Repo, error) {
	r := &Repo{Dir: dir}
	if _, err := r.Run(ctx, "rev-parse", "--git-dir"); err != nil {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("open git repository: %w", serr)
		}
		if errors.Is(err, ErrNotRepository) {
			return nil, fmt.Errorf("%s is not a git repository (create one with `git init`, or clone one): %w", dir, err)
		}
		return nil, fmt.Errorf("open git repository in %s: %w", dir, err)
	}
	return r, nil
}

// With returns a copy of r whose commands also get env.
func (r *Repo) With(env ...string) *Repo {
	c := *r
	c.Env = append(append([]string(nil), r.Env...), env...)
	return &c
}

// Error is a git command that failed.
type Error struct {
	Args []string
	Dir  string
	// ExitCode is git's exit status, or -1 when it did not exit normally.
	ExitCode int
	// Stderr is the tail of git's standard error.
	Stderr string
	// Stdout is what git printed before failing; some commands report
	// their results there (push --porcelain, merge-tree).
	Stdout string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("git ")
	b.WriteString(shortArgs(e.Args))
	if e.Dir != "" {
		fmt.Fprintf(&b, " (in %s)", e.Dir)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotRepository) hold when git failed because
// Dir is in no repository.
func (e *Error) Is(target error) bool {
	return target == ErrNotRepository && strings.Contains(e.Stderr, "not a git repository")
}

// shortArgs keeps long arguments (commit messages) from swamping the error.
func shortArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "\n", `\n`)
		if len(a) > 60 {
			a = a[:57] + "..."
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// stderrLines is how much of git's stderr an error keeps: the end, where
// git says what went wrong.
const stderrLines = 6

// tail keeps the last n lines of s that say something, joined into one.
func tail(s string, n int) string {
	var kept []string
	for _, l := range lines.Last(s, 0) {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept[max(0, len(kept)-n):], "; ")
}

// Run runs git with args in the repository and returns its standard
// output without the trailing newline. Leading spaces are kept: porcelain
// formats use them.
func (r *Repo) Run(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, args...)
	return strings.TrimRight(out, "\n"), err
}

// run returns git's whole standard output, also on failure.
func (r *Repo) run(ctx context.Context, args ...string) (string, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(cctx, "git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(Environ(), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never")
	cmd.Env = append(cmd.Env, r.Env...)
	if r.As != nil {
		// What runs as the agent (its config's fsmonitor, its hooks) gets
		// none of the host's credentials: the allowlist agents' code gets.
		cmd.Env = codeenv.Environ(Environ(), nil, append([]string{"GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never"}, r.Env...))
		if err := proc.AsUser(cmd, *r.As); err != nil {
			return "", &Error{Args: args, Dir: r.Dir, ExitCode: -1, Err: fmt.Errorf("run git as %s: %w", r.As.Name, err)}
		}
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Cancellation kills git and, on Unix, everything it started (hooks,
	// ssh, aliases), which would otherwise outlive it and hold its pipes.
	proc.Group(cmd)
	// A child (ssh, a hook, an alias) can keep the pipes open after git is
	// killed; do not wait for it beyond this.
	cmd.WaitDelay = 500 * time.Millisecond

	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	gerr := &Error{Args: args, Dir: r.Dir, ExitCode: -1, Stderr: tail(stderr.String(), stderrLines), Stdout: stdout.String(), Err: err}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		gerr.Err = fmt.Errorf("stopped: %w", ctx.Err())
	case cctx.Err() != nil:
		gerr.Err = fmt.Errorf("timed out after %s: %w", timeout, cctx.Err())
	case errors.As(err, &exit):
		gerr.ExitCode = exit.ExitCode()
	}
	return stdout.String(), gerr
}

// exitCode is git's exit status in err, or -1.
func exitCode(err error) int {
	var gerr *Error
	if errors.As(err, &gerr) {
		return gerr.ExitCode
	}
	return -1
}

// Environ is this process's environment without the variables that would
// point git at a repository other than the directory it runs in (set, for
// example, when agenttree runs from a git hook). Use it for any command run
// inside a repository: CI, hooks.
func Environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if repoLocalEnv[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// repoLocalEnv is `git rev-parse --local-env-vars`.
var repoLocalEnv = map[string]bool{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_CONFIG":                       true,
	"GIT_CONFIG_PARAMETERS":            true,
	"GIT_CONFIG_COUNT":                 true,
	"GIT_OBJECT_DIRECTORY":             true,
	"GIT_DIR":                          true,
	"GIT_WORK_TREE":                    true,
	"GIT_IMPLICIT_WORK_TREE":           true,
	"GIT_GRAFT_FILE":                   true,
	"GIT_INDEX_FILE":                   true,
	"GIT_NO_REPLACE_OBJECTS":           true,
	"GIT_REPLACE_REF_BASE":             true,
	"GIT_PREFIX":                       true,
	"GIT_INTERNAL_SUPER_PREFIX":        true,
	"GIT_SHALLOW_FILE":                 true,
	"GIT_COMMON_DIR":                   true,
}
