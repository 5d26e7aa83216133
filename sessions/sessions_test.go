package sessions_test

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// agentScript is the agent the tests start: it writes its environment,
// its user and its directory beside itself, and the session token it
// reads from its file as its own user (as TOKEN), then echoes what is
// typed.
const agentScript = `#!/bin/sh
out="$(dirname "$0")/agent-$AGENTTREE_ISSUE"
{ env; echo "PWD=$(pwd -P)"; grep '^Uid:' /proc/self/status; echo "TOKEN=$(cat "$AGENTTREE_TOKEN_FILE")"; } > "$out.tmp" && mv "$out.tmp" "$out.env"
exec cat
`

// rig is a repository with a bare origin, its state, a private tmux
// server and the agent script.
type rig struct {
	t      *testing.T
	origin string
	repo   string
	bin    string
	e      *engine.Engine
	tmux   *tmux.Client
	m      *sessions.Manager
}

const rigConfig = `project: shop
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

func newRig(t *testing.T, extra string) *rig {
	t.Helper()
	return newRigWith(t, agentScript, func(sock, agent string) string {
		return fmt.Sprintf(rigConfig, sock, agent, agent, extra)
	})
}

// newRigWith makes a rig whose agent is script, with the config config
// makes of the tmux socket and the script's path.
func newRigWith(t *testing.T, script string, config func(sock, agent string) string) *rig {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	origin, repo := gittest.NewRemote(t)
	bin := t.TempDir()
	agent := filepath.Join(bin, "agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(script), 0o755))
	sock := newTmuxServer(t)
	cfgPath := filepath.Join(repo, stages.FileName)
	require.NoError(t, os.WriteFile(cfgPath, []byte(config(sock, agent)), 0o644))
	cfg, err := load.File(cfgPath, builtin.Registry())
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(repo, "_agenttree"))
	require.NoError(t, err)
	e := engine.New(cfg, store, builtin.Registry(), nil)
	client := &tmux.Client{Socket: sock, LockDir: store.Root()}
	return &rig{t: t, origin: origin, repo: repo, bin: bin, e: e, tmux: client, m: sessions.New(e, client)}
}

// newTmuxServer starts a tmux server on a private socket, without the
// user's configuration, and returns the socket.
func newTmuxServer(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agenttree-tmux-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	conf := filepath.Join(dir, "tmux.conf")
	require.NoError(t, os.WriteFile(conf, nil, 0o644))
	sock := filepath.Join(dir, "sock")
	out, err := exec.Command("tmux", "-S", sock, "-f", conf, "new-session", "-d", "-s", "idle").CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	return sock
}

func (r *rig) create(title, stage string) *issues.Issue {
	r.t.Helper()
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: title, Stage: stage})
	require.NoError(r.t, err)
	return iss
}

// agentEnv waits for the agent of issue id to write its environment.
func (r *rig) agentEnv(id int) map[string]string {
	r.t.Helper()
	path := filepath.Join(r.bin, fmt.Sprintf("agent-%d.env", id))
	require.Eventually(r.t, func() bool { _, err := os.Stat(path); return err == nil }, 10*time.Second, 20*time.Millisecond)
	f, err := os.Open(path)
	require.NoError(r.t, err)
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
	require.NoError(r.t, os.Remove(path))
	return env
}

// screen is what session's pane shows.
func (r *rig) screen(session string) string {
	r.t.Helper()
	pane, err := r.tmux.Pane(context.Background(), session)
	require.NoError(r.t, err)
	out, err := r.tmux.Capture(context.Background(), pane, 100)
	require.NoError(r.t, err)
	return out
}

func (r *rig) git(dir string, args ...string) string {
	r.t.Helper()
	return gittest.Run(r.t, dir, args...)
}

func TestStartRunsTheAgentInItsWorktree(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	iss := r.create("Dark mode", "work")

	res, err := r.m.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.Equal(t, sessions.Started, res.State)
	rec := res.Session
	assert.Equal(t, "shop-developer-1", rec.Session)
	assert.Equal(t, delivery.SessionName(r.e.Config, iss), rec.Session, "the session the controller delivers to")
	assert.Equal(t, stages.RoleDeveloper, rec.Role)
	assert.Equal(t, "fake", rec.Agent)
	assert.Equal(t, filepath.Join(filepath.Dir(r.repo), "shop-worktrees", iss.Branch), rec.Worktree)

	// The worktree is on the issue's branch, made from origin's main.
	assert.Equal(t, iss.Branch, r.git(rec.Worktree, "symbolic-ref", "--short", "HEAD"))
	assert.Equal(t, r.git(r.origin, "rev-parse", "main"), r.git(rec.Worktree, "rev-parse", "HEAD"))

	// The agent runs there, told its issue, role and a token the
	// controller takes for that issue and role.
	env := r.agentEnv(iss.ID)
	assert.Equal(t, "1", env["AGENTTREE_ISSUE"])
	assert.Equal(t, "developer", env["AGENTTREE_ROLE"])
	assert.Equal(t, rec.Worktree, env["PWD"])
	sess, err := tokens.Open(r.e.Store.Root()).Lookup(env["TOKEN"])
	require.NoError(t, err)
	assert.Equal(t, 1, sess.Issue)
	assert.Equal(t, stages.RoleDeveloper, sess.Role)
	assert.NotContains(t, readAll(t, r.e.Store.Layout().AgentSession(1)), env["TOKEN"], "the record keeps no token")

	// Its first message, the stage's instructions, waits in the outbox;
	// the controller's delivery types it into the pane.
	require.NotEmpty(t, res.Message)
	pending, err := r.e.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Contains(t, pending[0].Text, "You are the developer agent of issue 1 (Dark mode), at stage work")
	assert.Contains(t, pending[0].Text, "run `agenttree next`")
	sent, err := delivery.Deliver(ctx, r.e, iss, r.tmux, nil)
	require.NoError(t, err)
	require.Len(t, sent, 1)
	assert.Contains(t, r.screen(rec.Session), outbox.Marker(pending[0])+" You are the developer agent of issue 1")

	// The agents list says it runs.
	list, err := r.m.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, list[0].Alive)
	assert.Equal(t, "fake", list[0].Agent)
	assert.NotEmpty(t, list[0].LastLine)
}

func TestStartIsIdempotentAndRestartReplaces(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	iss := r.create("Cache", "work")
	first, err := r.m.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	oldToken := r.agentEnv(iss.ID)["TOKEN"]

	again, err := r.m.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.Equal(t, sessions.Running, again.State, "a live session is reported")
	assert.Equal(t, first.Session.Pane, again.Session.Pane)

	// A file the agent left in its worktree survives the restart.
	require.NoError(t, os.WriteFile(filepath.Join(first.Session.Worktree, "wip.txt"), []byte("wip"), 0o644))
	re, err := r.m.Start(ctx, iss.ID, sessions.Options{Restart: true, Agent: "other"})
	require.NoError(t, err)
	assert.Equal(t, sessions.Restarted, re.State)
	assert.Equal(t, "other", re.Session.Agent)
	assert.Equal(t, first.Session.Worktree, re.Session.Worktree)
	assert.FileExists(t, filepath.Join(re.Session.Worktree, "wip.txt"))
	newToken := r.agentEnv(iss.ID)["TOKEN"]
	assert.NotEqual(t, oldToken, newToken)
	store := tokens.Open(r.e.Store.Root())
	_, err = store.Lookup(oldToken)
	assert.ErrorIs(t, err, tokens.ErrUnknown, "the replaced session's token is revoked")
	_, err = store.Lookup(newToken)
	assert.NoError(t, err)
}

func TestStopKeepsTheWorktree(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	iss := r.create("Stop me", "work")
	res, err := r.m.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	token := r.agentEnv(iss.ID)["TOKEN"]

	rec, err := r.m.Stop(ctx, iss.ID)
	require.NoError(t, err)
	assert.False(t, rec.Stopped.IsZero())
	live, err := r.tmux.HasSession(ctx, res.Session.Session)
	require.NoError(t, err)
	assert.False(t, live)
	assert.DirExists(t, res.Session.Worktree)
	_, err = tokens.Open(r.e.Store.Root()).Lookup(token)
	assert.ErrorIs(t, err, tokens.ErrUnknown)

	list, err := r.m.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.False(t, list[0].Alive)

	_, err = r.m.Stop(ctx, 99)
	assert.ErrorIs(t, err, sessions.ErrNoSession)
}

func TestAgentThatExitedIsListedDead(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	iss := r.create("Crash", "work")
	res, err := r.m.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	r.agentEnv(iss.ID)
	// The agent's cat ends at end of input.
	require.NoError(t, exec.Command("tmux", "-S", r.tmux.Socket, "send-keys", "-t", res.Session.Pane, "C-d").Run())
	require.Eventually(t, func() bool {
		list, err := r.m.List(ctx)
		return err == nil && len(list) == 1 && list[0].Exited
	}, 10*time.Second, 20*time.Millisecond)
	list, err := r.m.List(ctx)
	require.NoError(t, err)
	assert.False(t, list[0].Alive)
	assert.Contains(t, []int{0, -1}, list[0].ExitStatus, "0, or -1 until tmux has reaped it")
	assert.NotContains(t, list[0].LastLine, "Pane is dead", "the last line is the agent's, not tmux's note")
}

func TestStartAheadOfItsStageQueuesNothing(t *testing.T) {
	r := newRig(t, "")
	iss := r.create("Early review", "work")
	res, err := r.m.Start(context.Background(), iss.ID, sessions.Options{Role: "developer", Agent: "fake"})
	require.NoError(t, err)
	assert.NotEmpty(t, res.Message)

	iss2 := r.create("Reviewer early", "work")
	res, err = r.m.Start(context.Background(), iss2.ID, sessions.Options{Role: "reviewer", Agent: "other"})
	require.NoError(t, err)
	assert.Equal(t, "shop-reviewer-2", res.Session.Session)
	assert.Empty(t, res.Message, "the issue is at a developer's stage")
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
