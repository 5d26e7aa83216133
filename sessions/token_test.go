//go:build unix

package sessions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// The token of a session is in no process's argv nor environment, the
// tmux server's included when `start` is what starts it (a server keeps
// its argv for good, for every local user's ps): the agent reads it from
// a file only its user may read, and it acts only for the pane's
// processes.
func TestTheTokenIsInNoArgvNorEnvironment(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	// No server runs: this start starts it.
	require.NoError(t, exec.Command("tmux", "-S", r.Tmux.Socket, "kill-server").Run())
	iss := r.Create("Secret", "work")
	res, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)

	token := r.AgentEnv(iss.ID)["TOKEN"]
	require.True(t, strings.HasPrefix(token, "att_"), "the agent read its token: %q", token)
	procs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	for _, p := range procs {
		for _, f := range []string{"cmdline", "environ"} {
			data, err := os.ReadFile(filepath.Join(p, f))
			if err != nil {
				continue // ended meanwhile
			}
			assert.NotContains(t, string(data), token, "%s/%s holds the token", p, f)
		}
	}

	file := r.E.Store.Layout().AgentToken(iss.ID)
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o400), fi.Mode().Perm(), "only its user reads the token file")

	sess, err := tokens.Open(r.E.Store.Root()).Lookup(token)
	require.NoError(t, err)
	assert.Equal(t, res.Session.PanePID, sess.PID, "the token is bound to the pane's process")
	require.NoError(t, sess.Admits(res.Session.PanePID), "the pane's process acts with it")
	require.ErrorIs(t, sess.Admits(os.Getpid()), tokens.ErrNotTheSession, "a process outside the pane does not")

	// Stopping the session revokes the token and removes its file.
	_, err = r.M.Stop(context.Background(), iss.ID)
	require.NoError(t, err)
	_, err = os.Stat(file)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = tokens.Open(r.E.Store.Root()).Lookup(token)
	assert.ErrorIs(t, err, tokens.ErrUnknown)
}

// Under `sandbox: user:NAME` the token file is NAME's, readable by NAME
// alone: another OS user cannot read it.
func TestTheTokenFileIsTheSandboxUsers(t *testing.T) {
	u := ostest.OtherUser(t)
	r := sessionstest.NewRig(t, "sandbox: user:"+u.Name)
	ostest.OpenUp(t, filepath.Dir(r.Repo))
	ostest.OpenUp(t, r.Bin)
	require.NoError(t, os.Chmod(r.Bin, 0o777)) // the agent writes its environment there
	iss := r.Create("Sandboxed", "work")
	_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.NotEmpty(t, r.AgentEnv(iss.ID)["TOKEN"], "the agent's user reads it")

	fi, err := os.Stat(r.E.Store.Layout().AgentToken(iss.ID))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o400), fi.Mode().Perm())
	assert.Equal(t, uint32(u.UID), fi.Sys().(*syscall.Stat_t).Uid, "the token file is the agent's user's")
}
