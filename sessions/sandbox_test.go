//go:build linux

package sessions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
)

func TestSandboxUserRunsTheAgentAsItsUser(t *testing.T) {
	u := ostest.OtherUser(t)
	r := sessionstest.NewRig(t, "sandbox: user:"+u.Name)
	ostest.OpenUp(t, filepath.Dir(r.Repo))
	ostest.OpenUp(t, r.Bin)
	require.NoError(t, os.Chmod(r.Bin, 0o777)) // the agent writes its environment there
	iss := r.Create("Sandboxed", "work")

	res, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.Equal(t, "user:"+u.Name, res.Session.Sandbox)

	env := r.AgentEnv(iss.ID)
	id := fmt.Sprint(u.UID)
	assert.Equal(t, id+" "+id+" "+id+" "+id, env["Uid"], "real, effective, saved and filesystem uid are all the user's")
	assert.Equal(t, u.Name, env["USER"])
	assert.Equal(t, "1", env["AGENTTREE_ISSUE"])
	assert.Empty(t, env["AGENTTREE_TOKEN"], "the token is in no environment")
	assert.NotEmpty(t, env["TOKEN"], "the agent's user reads its token file")

	for _, p := range []string{res.Session.Worktree, filepath.Join(res.Session.Worktree, "a.txt")} {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		assert.Equal(t, uint32(u.UID), fi.Sys().(*syscall.Stat_t).Uid, "%s is the agent's", p)
	}
}
