// Package sessionstest is the rig the tests of sessions and its
// subpackages share: a repository with a bare origin, its state, a
// private tmux server and an agent script, all real.
package sessionstest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/sessions/tmux/tmuxtest"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// AgentScript is the agent the tests start: it writes its environment,
// its user and its directory beside itself, and the session token it
// reads from its file as its own user (as TOKEN), then echoes what is
// typed.
const AgentScript = `#!/bin/sh
out="$(dirname "$0")/agent-$AGENTTREE_ISSUE"
{ env; echo "PWD=$(pwd -P)"; grep '^Uid:' /proc/self/status; echo "TOKEN=$(cat "$AGENTTREE_TOKEN_FILE")"; } > "$out.tmp" && mv "$out.tmp" "$out.env"
exec cat
`

// Rig is a repository with a bare origin, its state, a private tmux
// server and the agent script, and the Manager of its sessions.
type Rig struct {
	T      *testing.T
	Origin string
	Repo   string
	Bin    string
	E      *engine.Engine
	Tmux   *tmux.Client
	M      *sessions.Manager
}

// RigConfig is the rig's config, of the tmux socket, the agent script
// twice (agents fake and other) and extra top-level keys.
const RigConfig = `project: shop
tmux: {socket: %q}
agents:
  fake: {command: %q}
  other: {command: %q}
  missing: {command: "no-such-agent-program --yes"}
roles:
  developer: {agents: [fake, other]}
  reviewer: {agents: []}
%s
stages:
  - name: backlog
    parking_lot: true
  - name: work
  - name: review
    role: reviewer
  - name: accepted
    terminal: completion
`

// NewRig makes a rig running AgentScript, with extra in its config.
func NewRig(t *testing.T, extra string) *Rig {
	t.Helper()
	return NewRigWith(t, AgentScript, func(sock, agent string) string {
		return fmt.Sprintf(RigConfig, sock, agent, agent, extra)
	})
}

// NewRigWith makes a rig whose agent is script, with the config config
// makes of the tmux socket and the script's path.
func NewRigWith(t *testing.T, script string, config func(sock, agent string) string) *Rig {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	origin, repo := gittest.NewRemote(t)
	bin := t.TempDir()
	agent := filepath.Join(bin, "agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(script), 0o755))
	sock := NewTmuxServer(t)
	cfgPath := filepath.Join(repo, stages.FileName)
	require.NoError(t, os.WriteFile(cfgPath, []byte(config(sock, agent)), 0o644))
	cfg, err := load.File(cfgPath, builtin.Registry())
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(repo, "_agenttree"))
	require.NoError(t, err)
	e := engine.New(cfg, store, builtin.Registry(), nil)
	client := &tmux.Client{Socket: sock, LockDir: store.Root()}
	return &Rig{T: t, Origin: origin, Repo: repo, Bin: bin, E: e, Tmux: client, M: sessions.New(e, client)}
}

// NewTmuxServer starts a tmux server on a private socket, without the
// user's configuration, and returns the socket.
func NewTmuxServer(t *testing.T) string {
	t.Helper()
	return tmuxtest.Server(t)
}

// Create creates an issue at stage.
func (r *Rig) Create(title, stage string) *issues.Issue {
	r.T.Helper()
	iss, err := r.E.Create(context.Background(), engine.NewIssue{Title: title, Stage: stage})
	require.NoError(r.T, err)
	return iss
}

// AgentEnv waits for the agent of issue id to write its environment.
func (r *Rig) AgentEnv(id int) map[string]string {
	r.T.Helper()
	path := filepath.Join(r.Bin, fmt.Sprintf("agent-%d.env", id))
	require.Eventually(r.T, func() bool { _, err := os.Stat(path); return err == nil }, 10*time.Second, 20*time.Millisecond)
	f, err := os.Open(path)
	require.NoError(r.T, err)
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		} else if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			env[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	require.NoError(r.T, os.Remove(path))
	return env
}

// Screen is what session's pane shows.
func (r *Rig) Screen(session string) string {
	r.T.Helper()
	pane, err := r.Tmux.Pane(context.Background(), session)
	require.NoError(r.T, err)
	out, err := r.Tmux.Capture(context.Background(), pane, 100)
	require.NoError(r.T, err)
	return out
}

// Git runs git in dir and returns its output, trimmed.
func (r *Rig) Git(dir string, args ...string) string {
	r.T.Helper()
	return gittest.Run(r.T, dir, args...)
}

// RequireSession checks that tmux session name is there, or is not.
func (r *Rig) RequireSession(name string, want bool) {
	r.T.Helper()
	live, err := r.Tmux.HasSession(context.Background(), name)
	require.NoError(r.T, err)
	require.Equal(r.T, want, live, "tmux session %s", name)
}

// HasBranch reports whether the repository has local branch branch.
func (r *Rig) HasBranch(branch string) bool {
	r.T.Helper()
	return r.Git(r.Repo, "branch", "--list", branch) != ""
}

// HasRemoteBranch reports whether origin has branch branch.
func (r *Rig) HasRemoteBranch(branch string) bool {
	r.T.Helper()
	return r.Git(r.Origin, "branch", "--list", branch) != ""
}
