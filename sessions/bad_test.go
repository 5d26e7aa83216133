package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
)

func TestBadStartsLeaveNothing(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra string
		stage string
		opts  sessions.Options
		is    error
		msg   string
		// broken makes the start fail after the worktree is made.
		broken bool
	}{
		{name: "finished issue", stage: "accepted", is: sessions.ErrFinished, msg: "issue 1 is at accepted, where it ends"},
		{name: "unknown agent", stage: "work", opts: sessions.Options{Agent: "fak"}, is: sessions.ErrNoAgent, msg: `unknown agent "fak" (did you mean fake?`},
		{name: "role without agents", stage: "review", is: sessions.ErrNoAgent, msg: "role reviewer lists no agents"},
		{name: "role without entry", stage: "work", opts: sessions.Options{Role: "tester"}, is: sessions.ErrNoAgent, msg: "role tester has no entry under `roles:`"},
		{name: "a person's role", stage: "work", opts: sessions.Options{Role: "human"}, is: sessions.ErrNoAgent, msg: `"human" is not an agent's role`},
		{name: "missing command", stage: "work", opts: sessions.Options{Agent: "missing"}, is: sessions.ErrNoAgent,
			msg: "runs no-such-agent-program, which is not installed"},
		{name: "container sandbox", extra: "sandbox: docker:agent:latest", stage: "work", is: sessions.ErrSandbox,
			msg: "sandbox docker:agent:latest: "},
		{name: "unknown sandbox user", extra: "sandbox: user:no-such-user-here", stage: "work", is: sessions.ErrSandbox,
			msg: "sandbox user:no-such-user-here"},
		{name: "tmux fails after the worktree", stage: "work", broken: true, msg: "start tmux session shop-developer-1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := sessionstest.NewRig(t, tt.extra)
			iss := r.Create("Bad", tt.stage)
			if tt.broken {
				r.Tmux.Socket = filepath.Join(t.TempDir(), "missing", "sock")
			}
			_, err := r.M.Start(context.Background(), iss.ID, tt.opts)
			require.Error(t, err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.msg)
			assertNothingMade(r, iss.Branch)
		})
	}
}

// assertNothingMade checks that no worktree, branch, session, token or
// record is left.
func assertNothingMade(r *sessionstest.Rig, branch string) {
	t := r.T
	t.Helper()
	assert.NoDirExists(t, filepath.Join(filepath.Dir(r.Repo), "shop-worktrees"))
	assert.Empty(t, r.Git(r.Repo, "branch", "--list", branch))
	assert.NotContains(t, r.Git(r.Repo, "worktree", "list"), branch)
	live, err := r.Tmux.HasSession(context.Background(), "shop-developer-1")
	require.NoError(t, err)
	assert.False(t, live)
	for _, dir := range []string{r.E.Store.Layout().Sessions(), r.E.Store.Layout().AgentSessions()} {
		entries, err := os.ReadDir(dir)
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		assert.Empty(t, entries, dir)
	}
	pending, err := r.E.Outbox(1).Pending()
	require.NoError(t, err)
	assert.Empty(t, pending)
}

func TestStartUnknownIssue(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	_, err := r.M.Start(context.Background(), 7, sessions.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "7")
}
