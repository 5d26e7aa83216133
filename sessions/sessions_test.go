package sessions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

func TestStartRunsTheAgentInItsWorktree(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	ctx := context.Background()
	iss := r.Create("Dark mode", "work")

	res, err := r.M.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.Equal(t, sessions.Started, res.State)
	rec := res.Session
	assert.Equal(t, "shop-developer-1", rec.Session)
	assert.Equal(t, delivery.SessionName(r.E.Config, iss), rec.Session, "the session the controller delivers to")
	assert.Equal(t, stages.RoleDeveloper, rec.Role)
	assert.Equal(t, "fake", rec.Agent)
	assert.Equal(t, filepath.Join(filepath.Dir(r.Repo), "shop-worktrees", iss.Branch), rec.Worktree)

	// The worktree is on the issue's branch, made from origin's main.
	assert.Equal(t, iss.Branch, r.Git(rec.Worktree, "symbolic-ref", "--short", "HEAD"))
	assert.Equal(t, r.Git(r.Origin, "rev-parse", "main"), r.Git(rec.Worktree, "rev-parse", "HEAD"))

	// The agent runs there, told its issue, role and a token the
	// controller takes for that issue and role.
	env := r.AgentEnv(iss.ID)
	assert.Equal(t, "1", env["AGENTTREE_ISSUE"])
	assert.Equal(t, "developer", env["AGENTTREE_ROLE"])
	assert.Equal(t, rec.Worktree, env["PWD"])
	sess, err := tokens.Open(r.E.Store.Root()).Lookup(env["TOKEN"])
	require.NoError(t, err)
	assert.Equal(t, 1, sess.Issue)
	assert.Equal(t, stages.RoleDeveloper, sess.Role)
	assert.NotContains(t, readAll(t, r.E.Store.Layout().AgentSession(1)), env["TOKEN"], "the record keeps no token")

	// Its first message, the stage's instructions, waits in the outbox;
	// the controller's delivery types it into the pane.
	require.NotEmpty(t, res.Message)
	pending, err := r.E.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Contains(t, pending[0].Text, "You are the developer agent of issue 1 (Dark mode), at stage work")
	assert.Contains(t, pending[0].Text, "run `agenttree next`")
	sent, err := delivery.Deliver(ctx, r.E, iss, r.Tmux, nil, nil)
	require.NoError(t, err)
	require.Len(t, sent, 1)
	assert.Contains(t, r.Screen(rec.Session), outbox.Marker(pending[0])+" You are the developer agent of issue 1")

	// The agents list says it runs.
	list, err := r.M.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, list[0].Alive)
	assert.Equal(t, "fake", list[0].Agent)
	assert.NotEmpty(t, list[0].LastLine)
}

func TestStartIsIdempotentAndRestartReplaces(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	ctx := context.Background()
	iss := r.Create("Cache", "work")
	first, err := r.M.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	oldToken := r.AgentEnv(iss.ID)["TOKEN"]

	again, err := r.M.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.Equal(t, sessions.Running, again.State, "a live session is reported")
	assert.Equal(t, first.Session.Pane, again.Session.Pane)

	// A file the agent left in its worktree survives the restart.
	require.NoError(t, os.WriteFile(filepath.Join(first.Session.Worktree, "wip.txt"), []byte("wip"), 0o644))
	re, err := r.M.Start(ctx, iss.ID, sessions.Options{Restart: true, Agent: "other"})
	require.NoError(t, err)
	assert.Equal(t, sessions.Restarted, re.State)
	assert.Equal(t, "other", re.Session.Agent)
	assert.Equal(t, first.Session.Worktree, re.Session.Worktree)
	assert.FileExists(t, filepath.Join(re.Session.Worktree, "wip.txt"))
	newToken := r.AgentEnv(iss.ID)["TOKEN"]
	assert.NotEqual(t, oldToken, newToken)
	store := tokens.Open(r.E.Store.Root())
	_, err = store.Lookup(oldToken)
	assert.ErrorIs(t, err, tokens.ErrUnknown, "the replaced session's token is revoked")
	_, err = store.Lookup(newToken)
	assert.NoError(t, err)
}

func TestStopKeepsTheWorktree(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	ctx := context.Background()
	iss := r.Create("Stop me", "work")
	res, err := r.M.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	token := r.AgentEnv(iss.ID)["TOKEN"]

	rec, err := r.M.Stop(ctx, iss.ID)
	require.NoError(t, err)
	assert.False(t, rec.Stopped.IsZero())
	live, err := r.Tmux.HasSession(ctx, res.Session.Session)
	require.NoError(t, err)
	assert.False(t, live)
	assert.DirExists(t, res.Session.Worktree)
	_, err = tokens.Open(r.E.Store.Root()).Lookup(token)
	assert.ErrorIs(t, err, tokens.ErrUnknown)

	list, err := r.M.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.False(t, list[0].Alive)

	_, err = r.M.Stop(ctx, 99)
	assert.ErrorIs(t, err, sessions.ErrNoSession)
}

func TestAgentThatExitedIsListedDead(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	ctx := context.Background()
	iss := r.Create("Crash", "work")
	res, err := r.M.Start(ctx, iss.ID, sessions.Options{})
	require.NoError(t, err)
	r.AgentEnv(iss.ID)
	// The agent's cat ends at end of input.
	require.NoError(t, exec.Command("tmux", "-S", r.Tmux.Socket, "send-keys", "-t", res.Session.Pane, "C-d").Run())
	require.Eventually(t, func() bool {
		list, err := r.M.List(ctx)
		return err == nil && len(list) == 1 && list[0].Exited
	}, 10*time.Second, 20*time.Millisecond)
	list, err := r.M.List(ctx)
	require.NoError(t, err)
	assert.False(t, list[0].Alive)
	assert.Contains(t, []int{0, -1}, list[0].ExitStatus, "0, or -1 until tmux has reaped it")
	assert.NotContains(t, list[0].LastLine, "Pane is dead", "the last line is the agent's, not tmux's note")
}

func TestStartAheadOfItsStageQueuesNothing(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	iss := r.Create("Early review", "work")
	res, err := r.M.Start(context.Background(), iss.ID, sessions.Options{Role: "developer", Agent: "fake"})
	require.NoError(t, err)
	assert.NotEmpty(t, res.Message)

	iss2 := r.Create("Reviewer early", "work")
	res, err = r.M.Start(context.Background(), iss2.ID, sessions.Options{Role: "reviewer", Agent: "other"})
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
