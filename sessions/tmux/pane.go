package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Pane resolves target (a session name, "session:window", or a pane id)
// to its pane id ("%N"): the active pane of the window (a session's
// current window). Resolve once and use the id from then on, so that later
// commands reach the same pane even when someone switches panes meanwhile.
func (c *Client) Pane(ctx context.Context, target string) (string, error) {
	pane, _, err := c.Where(ctx, target)
	return pane, err
}

// Where is Pane, and where the pane is in this life of its program and
// server: what SendTyped calls its typed with, and Submit checks.
func (c *Client) Where(ctx context.Context, target string) (pane, into string, err error) {
	st, err := c.paneState(ctx, target)
	if err != nil {
		return "", "", err
	}
	return st.id, st.where(), nil
}

// paneState is what a delivery needs to know about a pane.
type paneState struct {
	id       string
	inMode   bool // copy mode, view mode, clock mode, ...
	dead     bool // its program exited; the pane remains
	inputOff bool
	program  Program
	// server is the tmux server's life: its process id and the time it
	// started.
	server string
}

// where names the pane in one life of its program and of its server:
// pane ids are numbered afresh by a server started again (a reboot, a
// kill-server), and a respawned pane runs another program under the
// same id. Text typed into a pane is in no other.
func (st paneState) where() string {
	return fmt.Sprintf("%s/%d@%s", st.id, st.program.PID, st.server)
}

// paneState reads the state of the pane t names: the pane with that id,
// or the active pane of the window or session. list-panes, unlike
// display-message, fails for a target it cannot find instead of falling
// back to another pane.
func (c *Client) paneState(ctx context.Context, t string) (paneState, error) {
	if !isPaneID(t) && strings.Contains(t, ".") {
		// A session name has no '.': this is session:window.pane.
		return paneState{}, fmt.Errorf("find tmux pane %s: name a pane by its id (%%N), not by its position; session names have no '.' (see SessionName)", t)
	}
	out, err := c.run(ctx, nil, "list-panes", "-t", targetArg(t), "-F",
		"#{pane_id}\t#{pane_active}\t#{pane_in_mode}\t#{pane_dead}\t#{pane_input_off}\t#{pane_pid}\t#{pid}.#{start_time}\t#{pane_tty}\t#{pane_current_command}")
	var terr *Error
	switch {
	case errors.Is(err, ErrNoSession) && errors.As(err, &terr):
		// tmux's own words say why (no server, no such session); the
		// command line would say the pane's name twice more.
		return paneState{}, fmt.Errorf("find tmux pane %s%s: %w (tmux: %s)", t, c.onServer(), ErrNoSession, terr.Stderr)
	case err != nil:
		return paneState{}, fmt.Errorf("find tmux pane %s: %w", t, err)
	}
	for _, line := range strings.Split(out, "\n") {
		// Tabs: a command's name may hold spaces.
		f := strings.SplitN(line, "\t", 9)
		if len(f) != 9 {
			continue
		}
		if (isPaneID(t) && f[0] == t) || (!isPaneID(t) && f[1] == "1") {
			pid, _ := strconv.Atoi(f[5])
			return paneState{id: f[0], inMode: f[2] == "1", dead: f[3] == "1", inputOff: f[4] == "1",
				program: Program{PID: pid, TTY: f[7], Command: f[8]}, server: f[6]}, nil
		}
	}
	return paneState{}, fmt.Errorf("find tmux pane %s%s: %w", t, c.onServer(), ErrNoSession)
}

func (c *Client) onServer() string {
	if c.Socket == "" {
		return " on the default tmux server"
	}
	return " on tmux server " + c.Socket
}

// startWait bounds the wait for a pane's process to exec its program.
const startWait = 2 * time.Second

// readyForInput leaves any mode pane is in and checks its program can
// take input, and is one text may be typed into (not a shell): checked at
// every delivery, right before typing, as what runs in a pane changes.
func (c *Client) readyForInput(ctx context.Context, pane string) error {
	st, err := c.paneState(ctx, pane)
	if err != nil {
		return err
	}
	if st.inMode {
		if err := c.leaveMode(ctx, pane); err != nil {
			return err
		}
		if st, err = c.paneState(ctx, pane); err != nil {
			return err
		}
	}
	switch {
	case st.dead:
		return fmt.Errorf("tmux pane %s: its program has exited: %w", pane, ErrPaneBusy)
	case st.inputOff:
		return fmt.Errorf("tmux pane %s: input is turned off (select-pane -e turns it on): %w", pane, ErrPaneBusy)
	case st.inMode:
		return fmt.Errorf("tmux pane %s: stays in a mode after leaving it was asked: %w", pane, ErrPaneBusy)
	}
	// A program started a moment ago is given a moment to become itself.
	for wait := startWait; ; wait -= pollEvery {
		err := st.program.typable()
		if err == nil {
			return nil
		}
		if !errors.Is(err, errStarting) || wait <= 0 {
			return fmt.Errorf("tmux pane %s: %w", pane, err)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
		if st, err = c.paneState(ctx, pane); err != nil {
			return err
		}
	}
}

// leaveMode takes pane out of copy mode with the copy-mode command cancel;
// modes that have no such command (clock, tree) are cancelled by
// copy-mode -q (tmux 3.2 and later).
func (c *Client) leaveMode(ctx context.Context, pane string) error {
	c.log().Debug("leaving tmux pane mode before typing", "pane", pane)
	if _, err := c.run(ctx, nil, "send-keys", "-t", pane, "-X", "cancel"); err == nil {
		return nil
	}
	if _, err := c.run(ctx, nil, "copy-mode", "-q", "-t", pane); err != nil {
		return fmt.Errorf("leave the mode tmux pane %s is in: %w", pane, err)
	}
	return nil
}

func isPaneID(s string) bool { return strings.HasPrefix(s, "%") }

// targetArg is what a -t flag needs for what callers pass: a pane id as it
// is, a session name (alone or before ":window") matched exactly.
func targetArg(s string) string {
	switch {
	case isPaneID(s):
		return s
	case strings.Contains(s, ":"):
		return "=" + s
	}
	return exactSession(s)
}
