// Package tmux talks to a tmux server for agenttree: it finds agents'
// sessions and panes, starts and ends sessions, reads what a pane shows,
// and types messages into a pane the careful way (see Client.Send).
//
// Every tmux command runs as its own process with a timeout, its process
// group killed when it is cancelled, and its arguments passed as a list:
// nothing goes through a shell, and text to type is read by tmux from
// standard input, never parsed as a command.
package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/proc"
)

// DefaultTimeout bounds one tmux command when Client.Timeout is zero. tmux
// answers in milliseconds; a command that takes seconds is stuck.
const DefaultTimeout = 5 * time.Second

// Errors callers tell apart with errors.Is.
var (
	// ErrNoSession: the session, window or pane is not there, or no tmux
	// server runs on the socket. Nothing was typed; try again once the
	// session exists.
	ErrNoSession = errors.New("no such tmux session or pane")
	// ErrPaneBusy: the pane cannot take input (its program exited and
	// the pane remains, its input is turned off, or it is in a mode that
	// cannot be left). Nothing was typed.
	ErrPaneBusy = errors.New("tmux pane cannot take input")
	// ErrNotConfirmed: the text was pasted but the pane never showed it
	// submitted. It may or may not have reached the program in the pane.
	ErrNotConfirmed = errors.New("delivery not confirmed")
	// ErrNoAnswer: the server took the command and closed the connection
	// without answering it. It may have been exiting, or it may be there
	// still with every session; nothing can be told of its sessions.
	ErrNoAnswer = errors.New("tmux server closed the connection without answering")
)

// Client runs tmux commands against one server.
type Client struct {
	// Socket is the server's socket path (tmux -S); empty means the
	// default server (the one $TMUX points at, else the user's default).
	Socket string
	// LockDir holds the per-pane lock files that keep two senders from
	// typing into one pane at once; empty means a directory in the user's
	// cache directory.
	LockDir string
	// Timeout bounds each tmux command; zero means DefaultTimeout. A
	// deadline on the caller's context applies as well.
	Timeout time.Duration
	// Log receives a debug line for each recovery step of a delivery
	// (copy mode left, Enter pressed again); nil discards them.
	Log *slog.Logger
}

// Error is a tmux command that failed.
type Error struct {
	Args   []string
	Socket string
	// ExitCode is tmux's exit status, or -1 when it did not exit normally.
	ExitCode int
	// Stderr is the tail of what tmux printed on standard error.
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tmux ")
	b.WriteString(strings.Join(e.Args, " "))
	if e.Socket != "" {
		fmt.Fprintf(&b, " (server %s)", e.Socket)
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

// Is makes errors.Is(err, ErrNoSession) hold when tmux said the target or
// the server is not there, and errors.Is(err, ErrNoAnswer) when the server
// dropped the command unanswered (which matches ErrNoSession too, for the
// callers to which a server gone a moment later is no session).
func (e *Error) Is(target error) bool {
	said := func(s string) bool { return strings.Contains(e.Stderr, s) }
	switch target {
	case ErrNoSession:
		return slices.ContainsFunc(missingTarget, said)
	case ErrNoAnswer:
		return said(lostServer)
	}
	return false
}

// lostServer is what the tmux client prints when the server closed the
// connection before answering.
const lostServer = "server exited unexpectedly"

// missingTarget is what tmux prints when a target or the server is not
// there (tmux 2.x to 3.x wordings), a server exiting as it was asked (its
// last session ended, or kill-server) included. A server it cannot
// connect to for another reason (permission denied) is not missing.
var missingTarget = []string{
	"can't find session", "can't find window", "can't find pane",
	"session not found", "window not found", "pane not found",
	"no server running", "(No such file or directory)", "(Connection refused)",
	lostServer,
}

// run runs tmux with args, stdin (may be nil) as its standard input, and
// returns its standard output.
// Run runs one tmux command on the client's server and returns its
// output: for the commands the client has no method for. A failure is an
// *Error (errors.Is(err, ErrNoSession) holds for a missing session).
func (c *Client) Run(ctx context.Context, args ...string) (string, error) {
	return c.run(ctx, nil, args...)
}

func (c *Client) run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	full := args
	if c.Socket != "" {
		full = append([]string{"-S", c.Socket}, args...)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(cctx, "tmux", full...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	proc.Group(cmd)
	cmd.WaitDelay = 500 * time.Millisecond

	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	terr := &Error{Args: args, Socket: c.Socket, ExitCode: -1, Stderr: lines.Tail(stderr.String(), 3), Err: err}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		terr.Err = fmt.Errorf("stopped: %w", ctx.Err())
	case cctx.Err() != nil:
		terr.Err = fmt.Errorf("timed out after %s: %w", timeout, cctx.Err())
	case errors.As(err, &exit):
		terr.ExitCode = exit.ExitCode()
	}
	return stdout.String(), terr
}

// Query runs a tmux command that only reads, as Run does, except that a
// server that drops it unanswered is asked again: a server that exited
// says so then ("no server running"), one that is there answers. One
// that never answers is an error matching ErrNoAnswer and not
// ErrNoSession, so that no caller takes it for sessions that are gone.
func (c *Client) Query(ctx context.Context, args ...string) (string, error) {
	for try := 1; ; try++ {
		out, err := c.run(ctx, nil, args...)
		if !errors.Is(err, ErrNoAnswer) {
			return out, err
		}
		if try == queryTries {
			return out, fmt.Errorf("%w, %d times: %s", ErrNoAnswer, queryTries, err)
		}
		c.log().Debug("tmux server closed the connection without answering; asking again", "args", args, "socket", c.Socket)
		if err := sleep(ctx, queryWait); err != nil {
			return "", err
		}
	}
}

// Query asks a server that drops its command unanswered queryTries times,
// queryWait apart.
const (
	queryTries = 5
	queryWait  = 100 * time.Millisecond
)

// HasSession reports whether the server has a session named exactly name.
// No server running is no session, not an error; a server that never
// answers is one (see Query).
func (c *Client) HasSession(ctx context.Context, name string) (bool, error) {
	_, err := c.Query(ctx, "has-session", "-t", exactSession(name))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoSession):
		return false, nil
	}
	return false, err
}

// Capture returns what pane shows, wrapped lines joined, with the last
// lines lines of its history above the visible part (none when lines <= 0).
func (c *Client) Capture(ctx context.Context, pane string, lines int) (string, error) {
	args := []string{"capture-pane", "-p", "-J", "-t", targetArg(pane)}
	if lines > 0 {
		args = append(args, "-S", fmt.Sprint(-lines))
	}
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return "", fmt.Errorf("read tmux pane %s: %w", pane, err)
	}
	return out, nil
}

// NewSession starts a detached session name in dir running argv (the
// user's shell when argv is empty). argv is run as it is, not through a
// shell.
func (c *Client) NewSession(ctx context.Context, name, dir string, argv ...string) error {
	args := []string{"new-session", "-d", "-s", Arg(name)}
	if dir != "" {
		args = append(args, "-c", Arg(dir))
	}
	if len(argv) > 0 {
		args = append(args, "--")
		for _, a := range argv {
			args = append(args, Arg(a))
		}
	}
	if _, err := c.run(ctx, nil, args...); err != nil {
		return fmt.Errorf("start tmux session %s: %w", name, err)
	}
	return nil
}

// Arg is s as tmux must get it in a command line: tmux ends a command at
// an argument ending in ';' (taking the ';' away) unless a backslash
// precedes it.
func Arg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// KillSession ends the session named exactly name and what runs in it.
// A session that is not there is an error matching ErrNoSession.
func (c *Client) KillSession(ctx context.Context, name string) error {
	if _, err := c.run(ctx, nil, "kill-session", "-t", exactSession(name)); err != nil {
		return fmt.Errorf("end tmux session %s: %w", name, err)
	}
	return nil
}

// SessionName makes s (a rendered session template) a name tmux accepts
// and can be targeted by: '.' and ':' (which tmux refuses, as they
// separate window and pane in a target), spaces and control characters
// become '-'.
func SessionName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == ':' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return '-'
		}
		return r
	}, s)
}

// exactSession targets the session named exactly name: a bare name would
// also match a session whose name starts with it, or a pattern.
func exactSession(name string) string { return "=" + name + ":" }
