// Package sandbox says how an agent's command runs in its tmux pane: on
// this machine as it is, as the sandbox's OS user, or in a container of
// the sandbox's image; and checks, before anything is made, that it can.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/stages"
)

var (
	// ErrCommand: the agent's command cannot run (not valid shell, runs
	// nothing, or a program that is not installed).
	ErrCommand = errors.New("no agent to start")
	// ErrUnavailable: the configured sandbox cannot run agents here.
	ErrUnavailable = errors.New("sandbox cannot run agents")
)

// Launch is how an agent's process is started in its pane: Argv run as
// it is (no shell of tmux's), with Env added to the server's.
type Launch struct {
	Argv []string
	Env  []string
	// User is the sandbox's OS user; nil: the host's. The worktree is
	// handed to it (Chown).
	User *proc.User
	// box is the sandbox's container; nil: none. Its argv is made once
	// the worktree it mounts is known (At).
	box *box
}

// Mounts are what of the state a container gets besides its worktree:
// its issue's documents and the controller's socket.
type Mounts struct {
	// Issue is the issue whose documents Docs holds.
	Issue  int
	Docs   string
	Socket string
	// Token is the file holding the session's token, mounted read-only.
	Token string
	// Origin is the host repository's git directory, mounted read-only
	// at ContainerOrigin: the origin of the agent's clone. Empty: none.
	Origin string
}

// Plan is how command runs in tmux session session, in sandbox, or why
// it cannot. The command is the config's text, run by sh; every value
// reaches it as an environment variable, never spliced into it. Nothing
// is made: a start checks all it can before it makes the worktree.
func Plan(ctx context.Context, sandbox stages.Sandbox, command, session string, mounts Mounts) (*Launch, error) {
	switch sandbox.Kind {
	case stages.SandboxDocker, stages.SandboxPodman:
		return inContainer(ctx, sandbox, command, session, mounts)
	}
	return onHost(command, sandbox)
}

// onHost is how command runs on this machine: as it is, or as the
// sandbox's user.
func onHost(command string, sandbox stages.Sandbox) (*Launch, error) {
	if err := findProgram(command); err != nil {
		return nil, err
	}
	l := &Launch{Argv: []string{"sh", "-c", command}}
	switch sandbox.Kind {
	case "", stages.SandboxNone:
		return l, nil
	case stages.SandboxUser:
		return l.asUser(sandbox.Name)
	}
	return nil, fmt.Errorf("%w: agents do not run on this machine in sandbox %s", ErrUnavailable, sandbox)
}

// inContainer is how command runs in a container of the sandbox's image,
// which gets the agent's clone, the host's git directory read-only (the
// clone's origin), the issue's documents and the controller's socket,
// nothing else of the state (docs/SECURITY.md). The program the
// command runs is the image's, so the host's PATH is not searched.
func inContainer(ctx context.Context, sandbox stages.Sandbox, command, session string, mounts Mounts) (*Launch, error) {
	if _, err := firstProgram(command); err != nil {
		return nil, err
	}
	if err := checkImage(ctx, sandbox); err != nil {
		return nil, err
	}
	b := &box{runtime: sandbox.Kind, image: sandbox.Name, name: containerName(session),
		docs: mounts.Docs, socket: mounts.Socket, token: mounts.Token, origin: mounts.Origin, command: command}
	if err := checkMount(fmt.Sprintf("issue %d's documents", mounts.Issue), b.docs, false); err != nil {
		return nil, err
	}
	if b.origin != "" {
		if err := checkMount("the repository's git directory", b.origin, false); err != nil {
			return nil, err
		}
	}
	if err := checkMount("the controller's socket", b.socket, true); err != nil {
		return nil, err
	}
	return &Launch{box: b}, nil
}

// OnlyEnv makes the agent of another OS user start with env alone
// ("NAME=value"), not with what its pane inherits: the command runs
// through `env -i` after setpriv. Nothing for the other sandboxes: a
// container gets only what is passed by name, and an agent of the
// person's own user could read the rest anyway.
func (l *Launch) OnlyEnv(env []string) {
	if l.User == nil {
		return
	}
	i := slices.Index(l.Argv, "--")
	if i < 0 {
		return
	}
	rest := slices.Clone(l.Argv[i+1:])
	l.Argv = slices.Concat(l.Argv[:i+1], []string{"env", "-i"}, env, rest)
}

// InContainer reports whether l runs the agent in a container.
func (l *Launch) InContainer() bool { return l.box != nil }

// At finishes l for the worktree at dir, where its session starts: a
// container mounts it (the agent's clone) as its working directory.
func (l *Launch) At(dir string) error {
	if l.box == nil {
		return nil
	}
	if err := checkMount("the worktree", dir, false); err != nil {
		return err
	}
	l.Argv = l.box.argv(dir)
	return nil
}

// asUser runs the command as the OS user name through setpriv, which
// makes the same setresuid, setresgid and setgroups calls as
// proc.AsUser, in the pane's process, and keeps the environment tmux
// gives it (runuser would open a PAM session and reset it). Only root
// may switch users.
func (l *Launch) asUser(name string) (*Launch, error) {
	u, err := proc.LookupUser(name)
	if err != nil {
		return nil, fmt.Errorf("%w: sandbox user:%s: %w", ErrUnavailable, name, err)
	}
	if euid := os.Geteuid(); euid != 0 && uint32(euid) != u.UID {
		return nil, fmt.Errorf("%w: sandbox user:%s: %w; run `agenttree start` as root", ErrUnavailable, name, proc.ErrNeedsRoot)
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		return nil, fmt.Errorf("%w: sandbox user:%s needs setpriv (util-linux) to start agents as %s: %w", ErrUnavailable, name, name, err)
	}
	groups := "--clear-groups"
	if len(u.Groups) > 0 {
		ids := make([]string, len(u.Groups))
		for i, g := range u.Groups {
			ids[i] = strconv.FormatUint(uint64(g), 10)
		}
		groups = "--groups=" + strings.Join(ids, ",")
	}
	l.Argv = append([]string{"setpriv", "--reuid=" + strconv.FormatUint(uint64(u.UID), 10),
		"--regid=" + strconv.FormatUint(uint64(u.GID), 10), groups, "--"}, l.Argv...)
	l.Env = append(l.Env, "HOME="+u.Home, "USER="+u.Name, "LOGNAME="+u.Name)
	l.User = &u
	return l, nil
}

// findProgram checks that the program command runs first exists here.
// A builtin, or a name only the shell can work out ($VAR), is left to the
// shell.
func findProgram(command string) error {
	name, err := firstProgram(command)
	if err != nil || name == "" || isBuiltin(name) {
		return err
	}
	if _, err := exec.LookPath(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("%w: agent command %q runs %s, which is not installed (not found in PATH); install it or fix the agent's command", ErrCommand, command, filepath.Base(name))
		}
		return fmt.Errorf("%w: agent command %q: %w", ErrCommand, command, err)
	}
	return nil
}

// firstProgram is the name of the program command runs first, its first
// simple command's as sh reads it; empty when only the shell can work it
// out ($VAR). A command that is not valid shell or runs nothing is an
// error.
func firstProgram(command string) (string, error) {
	file, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil {
		return "", fmt.Errorf("%w: agent command %q is not valid shell: %w", ErrCommand, command, err)
	}
	var call *syntax.CallExpr
	syntax.Walk(file, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && call == nil && len(c.Args) > 0 {
			call = c
		}
		return call == nil
	})
	if call == nil {
		return "", fmt.Errorf("%w: agent command %q runs no program", ErrCommand, command)
	}
	name, _ := literal(call.Args[0], os.Getenv)
	return name, nil
}
