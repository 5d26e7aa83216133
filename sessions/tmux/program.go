package tmux

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/internal/proc"
)

// ErrNotAgent: the program that would read what is typed into the pane is
// one that runs typed text as commands (a shell), or cannot be told. Nothing
// was typed (docs/SECURITY.md: nothing agenttree sends may run as a
// command).
var ErrNotAgent = errors.New("the pane's program is not one agenttree types into")

// Program is what runs in a pane, as tmux and the kernel tell it.
type Program struct {
	// PID is the process tmux started in the pane (the agent agenttree
	// launched, or what it exec'd into).
	PID int
	// Command is tmux's name for the foreground program of the pane's
	// terminal (pane_current_command).
	Command string
	// TTY is the pane's terminal ("/dev/pts/3").
	TTY string
}

// Program reads what runs in the pane target names.
func (c *Client) Program(ctx context.Context, target string) (Program, error) {
	st, err := c.paneState(ctx, target)
	if err != nil {
		return Program{}, err
	}
	return st.program, nil
}

// typable says why text must not be typed into a pane running p, or nil.
// The reader of typed text is the terminal's foreground process group; it
// must be the group of the process tmux started (no job a shell put in
// front), that process must not be a shell, and no shell in the group may
// be reading the terminal. Where the kernel cannot be asked (no /proc),
// tmux's name of the foreground program must not be a shell's.
func (p Program) typable() error {
	if p.PID <= 0 {
		return fmt.Errorf("tmux did not say the pane's process: %w", ErrNotAgent)
	}
	top, err := proc.Inspect(p.PID)
	if errors.Is(err, proc.ErrNoProcfs) {
		if shellName(p.Command) {
			return fmt.Errorf("the pane's foreground program is a shell (%s): %w", strconv.Quote(p.Command), ErrNotAgent)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the pane's process: %w: %w", err, ErrNotAgent)
	}
	if starting(top) {
		return errStarting
	}
	if isShell(top) {
		return fmt.Errorf("the pane runs a shell (%s, pid %d): %w", strconv.Quote(top.Comm), top.PID, ErrNotAgent)
	}
	if top.TPGID != top.PGRP {
		what := "another program (process group " + strconv.Itoa(top.TPGID) + ")"
		if fg, err := proc.Inspect(top.TPGID); err == nil {
			what = "another program (" + strconv.Quote(fg.Comm) + ")"
			if isShell(fg) {
				what = "a shell (" + strconv.Quote(fg.Comm) + ")"
			}
		}
		return fmt.Errorf("%s holds the pane's terminal, in front of the program started in it (%s): %w", what, strconv.Quote(top.Comm), ErrNotAgent)
	}
	group, err := proc.InGroup(top.PGRP)
	if err != nil {
		return fmt.Errorf("list the pane's foreground processes: %w: %w", err, ErrNotAgent)
	}
	for _, g := range group {
		if p.TTY == "" || proc.Stdin(g.PID) != p.TTY {
			continue
		}
		if len(proc.Cmdline(g.PID)) == 0 {
			// A process of the group between fork and exec (a script's
			// shell starting its next program) has no arguments to read
			// yet: it is told for what it is once it runs, not taken for
			// an interactive shell now.
			return errStarting
		}
		if isShell(g) {
			return fmt.Errorf("a shell (%s, pid %d) reads the pane's terminal: %w", strconv.Quote(g.Comm), g.PID, ErrNotAgent)
		}
	}
	return nil
}

// errStarting: the pane's process has not become its program yet (tmux
// forked it and it has not exec'd, or is exec'ing): what it will run
// cannot be told yet.
var errStarting = fmt.Errorf("the pane's program is still starting: %w", ErrNotAgent)

// starting reports whether info is a pane's process before its program
// runs: still tmux's fork, or in the middle of exec (no arguments yet).
func starting(info proc.Info) bool {
	return strings.HasPrefix(info.Comm, "tmux") || len(proc.Cmdline(info.PID)) == 0
}

// isShell reports whether info is a shell that reads commands from its
// input: by the file it runs or its name, and by its arguments (a shell
// running a script or `-c` reads its commands from there, not from the
// terminal: an agent's wrapper script is not refused).
func isShell(info proc.Info) bool {
	if !shellName(info.Comm) && !shellName(filepath.Base(info.Exe)) {
		return false
	}
	return interactive(proc.Cmdline(info.PID))
}

// shells are the programs that run what is typed into them as commands.
var shells = map[string]bool{
	"sh": true, "ash": true, "dash": true, "bash": true, "rbash": true, "zsh": true, "fish": true,
	"ksh": true, "ksh93": true, "mksh": true, "pdksh": true, "oksh": true, "loksh": true, "yash": true,
	"csh": true, "tcsh": true, "rc": true, "es": true, "busybox": true, "nu": true, "elvish": true,
	"xonsh": true, "pwsh": true, "powershell": true, "ion": true, "osh": true, "oil": true, "ysh": true,
	"cmd.exe": true, "powershell.exe": true, "pwsh.exe": true,
}

// shellName reports whether name (a command name or argv[0], "-bash" for
// a login shell) is a shell's.
func shellName(name string) bool {
	name = strings.TrimPrefix(filepath.Base(strings.TrimSpace(name)), "-")
	return shells[strings.ToLower(name)]
}

// interactive reports whether a shell started with argv reads commands
// from its input: it names no script and no `-c` command, or it is told
// to with -i or -s. nil (unreadable) counts as interactive.
func interactive(argv []string) bool {
	if len(argv) == 0 {
		return true
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return i+1 >= len(argv)
		case valueFlags[a]:
			i++ // its value is not a script
		case strings.HasPrefix(a, "--"):
			if a == "--interactive" {
				return true
			}
			if a == "--command" {
				return false
			}
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			flags := a[1:]
			if strings.ContainsAny(flags, "is") && a[0] == '-' {
				return true
			}
			if strings.Contains(flags, "c") && a[0] == '-' {
				return false
			}
		default:
			return false // a script
		}
	}
	return true
}

// valueFlags take the next argument as their value, in the shells above.
var valueFlags = map[string]bool{
	"-o": true, "+o": true, "-O": true, "+O": true, "--rcfile": true, "--init-file": true,
	"-C": true, "--init-command": true,
}

// stillTheAgent checks, right before a key is sent, that pane's program
// is still one text may be typed into.
func (c *Client) stillTheAgent(ctx context.Context, pane string) error {
	st, err := c.paneState(ctx, pane)
	if err != nil {
		return err
	}
	if err := st.program.typable(); err != nil {
		return fmt.Errorf("tmux pane %s: %w", pane, err)
	}
	return nil
}
