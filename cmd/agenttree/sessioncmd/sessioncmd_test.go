package sessioncmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// pipeline is a developer's stage run by a stand-in agent that echoes
// what is typed into its pane, on the tmux server at %q.
const pipeline = `project: shop
tmux: {socket: %q}
agents:
  echo: {command: "cat"}
roles:
  developer: {agents: [echo]}
stages:
  - name: work
  - name: accepted
    terminal: completion
`

// newWorkspace is pipeline on a private tmux server, with issue 1 at work
// and issue 2 at accepted.
func newWorkspace(t *testing.T) (*cmdtest.Workspace, string) {
	t.Helper()
	socket := cmdtest.Tmux(t)
	w := cmdtest.NewWith(t, fmt.Sprintf(pipeline, socket))
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	for _, stage := range []string{"", "accepted"} {
		_, err = e.Create(context.Background(), engine.NewIssue{Title: "Dark mode", Stage: stage})
		require.NoError(t, err)
	}
	w.Reset()
	return w, socket
}

func TestNewCmds(t *testing.T) {
	cmdtest.CheckFlags(t, []cmdtest.Flags{
		{Name: "start", Run: cmdtest.Flagged(newCmdStart, "3"), Want: &StartOptions{IssueArg: "3"}},
		{Name: "start, every flag", Run: cmdtest.Flagged(newCmdStart, "3", "--role", "reviewer", "--agent", "codex", "--restart", "--json"),
			Want: &StartOptions{IssueArg: "3", Role: "reviewer", Start: sessions.Options{Agent: "codex", Restart: true}, JSON: true}},
		{Name: "start without ID", Run: cmdtest.Flagged(newCmdStart), Err: "ID"},
		{Name: "attach", Run: cmdtest.Flagged(newCmdAttach, "3"), Want: &AttachOptions{IssueArg: "3"}},
		{Name: "stop", Run: cmdtest.Flagged(newCmdStop, "3", "--json"), Want: &StopOptions{IssueArg: "3", JSON: true}},
		{Name: "agents", Run: cmdtest.Flagged(newCmdAgents), Want: &AgentsOptions{}},
		{Name: "clean", Run: cmdtest.Flagged(newCmdClean, "--dry-run", "--json"), Want: &CleanOptions{DryRun: true, JSON: true}},
		{Name: "token", Run: cmdtest.Flagged(newCmdToken, "3"), Want: &TokenOptions{IssueArg: "3", Role: "developer"}},
		{Name: "token as a reviewer", Run: cmdtest.Flagged(newCmdToken, "3", "--role", "reviewer", "--json"), Want: &TokenOptions{IssueArg: "3", Role: "reviewer", JSON: true}},
	})
}

func TestTokenRun(t *testing.T) {
	tests := []struct {
		name string
		opts TokenOptions
		env  map[string]string
		err  string
		code exitcode.Code
	}{
		{name: "a developer's", opts: TokenOptions{IssueArg: "1", Role: "developer"}},
		{name: "a reviewer's, as JSON", opts: TokenOptions{IssueArg: "1", Role: "reviewer", JSON: true}},
		{name: "no agent's role", opts: TokenOptions{IssueArg: "1", Role: "human"}, err: "--role names an agent's role", code: exitcode.Usage},
		{name: "no such issue", opts: TokenOptions{IssueArg: "9", Role: "developer"}, err: "9"},
		{name: "by an agent", opts: TokenOptions{IssueArg: "1", Role: "developer"}, env: map[string]string{"AGENTTREE_ROLE": "developer"},
			err: "session tokens are made by people", code: exitcode.Waiting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _ := newWorkspace(t)
			for k, v := range tt.env {
				w.Env[k] = v
			}
			tt.opts.App = w.App
			err := tokenRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				if tt.code != 0 {
					assert.Equal(t, int(tt.code), cmdutil.ExitCode(err))
				}
				assert.Empty(t, w.Out.String())
				return
			}
			require.NoError(t, err)
			token := strings.TrimSpace(w.Out.String())
			if tt.opts.JSON {
				var v struct {
					Token string      `json:"token"`
					Issue int         `json:"issue"`
					Role  stages.Role `json:"role"`
				}
				require.NoError(t, json.Unmarshal(w.Out.Bytes(), &v))
				assert.Equal(t, 1, v.Issue)
				token = v.Token
			}
			e, err := w.App.Engine(t.Context())
			require.NoError(t, err)
			sess, err := tokens.Open(e.Store.Root()).Lookup(token)
			require.NoError(t, err, "the store knows the token it printed")
			assert.Equal(t, 1, sess.Issue)
			assert.Equal(t, stages.Role(tt.opts.Role), sess.Role)
		})
	}
}

// A session's life through the runs: start, agents, attach, stop, clean.
func TestSessionRuns(t *testing.T) {
	w, socket := newWorkspace(t)
	require.NoError(t, startRun(t.Context(), &StartOptions{App: w.App, IssueArg: "1", JSON: true}))
	var started struct {
		State     string `json:"state"`
		Delivered bool   `json:"delivered"`
		Session   struct{ Session, Worktree, Agent string }
	}
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &started), w.Out.String())
	assert.Equal(t, "started", started.State)
	assert.Equal(t, "echo", started.Session.Agent)
	assert.True(t, started.Delivered, w.Out.String())
	assert.DirExists(t, started.Session.Worktree)
	require.NoError(t, exec.Command("tmux", "-S", socket, "has-session", "-t", "="+started.Session.Session).Run(), "the session lives")

	w.Reset()
	require.NoError(t, startRun(t.Context(), &StartOptions{App: w.App, IssueArg: "1"}))
	assert.Equal(t, fmt.Sprintf("issue 1: tmux session %s is running already (agent echo, role developer); --restart replaces it\n", started.Session.Session), w.Out.String())

	w.Reset()
	require.NoError(t, agentsRun(t.Context(), &AgentsOptions{App: w.App}))
	assert.Contains(t, w.Out.String(), "ISSUE  ROLE")
	assert.Contains(t, w.Out.String(), started.Session.Session+"  alive")

	w.Reset()
	require.NoError(t, attachRun(t.Context(), &AttachOptions{App: w.App, IssueArg: "1"}))
	assert.Equal(t, fmt.Sprintf("not a terminal; to attach to issue 1's agent, run:\n  tmux -S %s attach-session -t =%s:\n", socket, started.Session.Session), w.Out.String())

	w.Reset()
	require.NoError(t, stopRun(t.Context(), &StopOptions{App: w.App, IssueArg: "1"}))
	assert.Equal(t, fmt.Sprintf("issue 1: tmux session %s ended; its worktree stays at %s\n", started.Session.Session, started.Session.Worktree), w.Out.String())
	assert.Error(t, exec.Command("tmux", "-S", socket, "has-session", "-t", "="+started.Session.Session).Run(), "the session ended")
	assert.DirExists(t, started.Session.Worktree)

	w.Reset()
	require.NoError(t, agentsRun(t.Context(), &AgentsOptions{App: w.App, JSON: true}))
	var list []struct {
		Issue int  `json:"issue"`
		Alive bool `json:"alive"`
	}
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &list), w.Out.String())
	require.Len(t, list, 1)
	assert.False(t, list[0].Alive)

	w.Reset()
	err := stopRun(t.Context(), &StopOptions{App: w.App, IssueArg: "2"})
	require.ErrorContains(t, err, "no agent session")
}

func TestSessionRunsAreForPeople(t *testing.T) {
	w, _ := newWorkspace(t)
	w.Env["AGENTTREE_ROLE"] = "developer"
	for name, run := range map[string]func() error{
		"start":  func() error { return startRun(t.Context(), &StartOptions{App: w.App, IssueArg: "1"}) },
		"attach": func() error { return attachRun(t.Context(), &AttachOptions{App: w.App, IssueArg: "1"}) },
		"stop":   func() error { return stopRun(t.Context(), &StopOptions{App: w.App, IssueArg: "1"}) },
		"agents": func() error { return agentsRun(t.Context(), &AgentsOptions{App: w.App}) },
		"clean":  func() error { return cleanRun(t.Context(), &CleanOptions{App: w.App}) },
	} {
		err := run()
		require.ErrorContains(t, err, "only a person", name)
		assert.Equal(t, int(exitcode.Waiting), cmdutil.ExitCode(err), name)
	}
	assert.NoDirExists(t, filepath.Join(filepath.Dir(w.Dir), "shop-worktrees"), "nothing was started")
}

func TestCleanRun(t *testing.T) {
	w, _ := newWorkspace(t)
	require.NoError(t, cleanRun(t.Context(), &CleanOptions{App: w.App}))
	assert.Equal(t, "nothing to clean: no issue has an agent session or a worktree left\n", w.Out.String())

	// A finished issue's session and worktree go; one with work nowhere
	// else stays, and the exit says so.
	w.Reset()
	require.NoError(t, startRun(t.Context(), &StartOptions{App: w.App, IssueArg: "1"}))
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	_, err = e.Next(context.Background(), 1, engine.Actor{Kind: engine.ActorHuman}, false)
	require.NoError(t, err)
	w.Reset()
	require.NoError(t, cleanRun(t.Context(), &CleanOptions{App: w.App, DryRun: true}))
	assert.Contains(t, w.Out.String(), "issue 1: ")
	assert.Contains(t, w.Out.String(), "worktree ")
	w.Reset()
	require.NoError(t, cleanRun(t.Context(), &CleanOptions{App: w.App}))
	assert.True(t, strings.HasPrefix(w.Out.String(), "issue 1: removed worktree "), w.Out.String())
	w.Reset()
	require.NoError(t, cleanRun(t.Context(), &CleanOptions{App: w.App}))
	assert.Equal(t, "nothing to clean: no issue has an agent session or a worktree left\n", w.Out.String())
}
