package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionsPipeline declares a developer's stage run by a stand-in agent
// that echoes what is typed into its pane.
const sessionsPipeline = `project: shop
tmux: {socket: %q}
agents:
  echo: {command: "cat"}
  missing: {command: "no-such-agent-program"}
roles:
  developer: {agents: [echo]}
stages:
  - name: work
  - name: accepted
    terminal: completion
`

func TestSessionCommands(t *testing.T) {
	server := newTmuxServer(t)
	w := newForgeRepo(t, fmt.Sprintf(sessionsPipeline, server.socket))
	id := w.create(t, "Dark mode")

	r := w.run(t, agentEnv, "start", itoa(id))
	assert.Equal(t, exitWaiting, r.code, "agents do not start agents")
	assert.Contains(t, r.stderr, "only a person starts agent sessions")

	r = w.run(t, humanEnv, "start", itoa(id), "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var started struct {
		State     string `json:"state"`
		Delivered bool   `json:"delivered"`
		Session   struct {
			Session, Worktree, Agent string
		} `json:"session"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &started), r.stdout)
	assert.Equal(t, "started", started.State)
	assert.Equal(t, agentSession(id), started.Session.Session)
	assert.Equal(t, "echo", started.Session.Agent)
	assert.True(t, started.Delivered, r.stdout)
	assert.DirExists(t, started.Session.Worktree)
	assert.Contains(t, server.run(t, "capture-pane", "-p", "-t", "="+agentSession(id)+":"), "You are the developer agent of issue 1")

	r = w.run(t, humanEnv, "start", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "is running already")

	r = w.run(t, humanEnv, "agents", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var list []struct {
		Issue    int    `json:"issue"`
		Alive    bool   `json:"alive"`
		LastLine string `json:"last_line"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	require.Len(t, list, 1)
	assert.True(t, list[0].Alive)

	r = w.run(t, humanEnv, "attach", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "tmux -S "+server.socket+" attach-session -t ="+agentSession(id)+":")

	r = w.run(t, humanEnv, "stop", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "ended; its worktree stays at "+started.Session.Worktree)
	assert.DirExists(t, started.Session.Worktree)
	r = w.run(t, humanEnv, "agents")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "stopped")
}

func TestStartRefusesWhatCannotRun(t *testing.T) {
	server := newTmuxServer(t)
	w := newForgeRepo(t, fmt.Sprintf(sessionsPipeline, server.socket))
	id := w.create(t, "Dark mode")
	done := w.create(t, "Done", "--stage", "accepted")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"start", itoa(id), "--agent", "ech"}, `unknown agent "ech" (did you mean echo?`},
		{[]string{"start", itoa(id), "--agent", "missing"}, "runs no-such-agent-program, which is not installed"},
		{[]string{"start", itoa(id), "--role", "reviewer"}, "role reviewer has no entry under `roles:`"},
		{[]string{"start", itoa(done)}, "issue 2 is at accepted, where it ends"},
		{[]string{"start", "9"}, "issue 9"},
		{[]string{"stop", itoa(id)}, "no agent session"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := w.run(t, humanEnv, tt.args...)
			assert.Equal(t, exitUsage, r.code, r.stdout)
			assert.Contains(t, r.stderr, tt.want)
		})
	}
	assert.NoDirExists(t, filepath.Join(filepath.Dir(w.dir), "shop-worktrees"), "nothing half-made")
	entries, err := os.ReadDir(filepath.Join(w.dir, "_agenttree", "host", "agents"))
	assert.True(t, os.IsNotExist(err) || len(entries) == 0)
}
