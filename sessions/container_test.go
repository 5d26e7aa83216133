package sessions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/sessions"
)

// fakeDocker stands for a docker whose daemon has every image: it
// writes the arguments of `run` and what the container would get of its
// environment beside itself, then echoes what is typed, as an agent.
const fakeDocker = `#!/bin/sh
[ "$1" = image ] && exit 0
out="${0%/*}/run"
printf '%s\n' "$@" > "$out.args"
{ echo "AGENTTREE_ISSUE=$AGENTTREE_ISSUE"; echo "AGENTTREE_ROLE=$AGENTTREE_ROLE"; echo "AGENTTREE_TOKEN=$AGENTTREE_TOKEN"; echo "AGENTTREE_TOKEN_FILE=$AGENTTREE_TOKEN_FILE"; } > "$out.tmp"
mv "$out.tmp" "$out.env"
exec cat
`

// listenController opens the controller's socket of r's state, as a
// running controller does; the state is made with the first issue.
func (r *rig) listenController() {
	l, err := api.Listen(r.e.Store.Layout().Socket())
	require.NoError(r.t, err)
	r.t.Cleanup(func() { _ = l.Close() })
}

func TestStartRunsTheAgentInAContainer(t *testing.T) {
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "docker"), []byte(fakeDocker), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := newRig(t, "sandbox: docker:agent:1")
	iss := r.create("Boxed", "work")
	r.listenController()

	res, err := r.m.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.Equal(t, "docker:agent:1", res.Session.Sandbox)

	env := filepath.Join(bin, "run.env")
	require.Eventually(t, func() bool { _, err := os.Stat(env); return err == nil }, 10*time.Second, 20*time.Millisecond)
	layout := r.e.Store.Layout()
	args := readAll(t, filepath.Join(bin, "run.args"))
	assert.Equal(t, strings.Join([]string{"run", "--rm", "-i", "-t", "--name", "agenttree-shop-developer-1",
		"-v", res.Session.Worktree + ":/work", "-w", "/work",
		"-v", layout.Docs(iss.ID) + ":/agenttree/docs",
		"-v", filepath.Dir(layout.Socket()) + ":/agenttree/run",
		"-e", "AGENTTREE_SOCKET=/agenttree/run/controller.sock",
		"-v", layout.AgentToken(iss.ID) + ":/agenttree/token:ro", "-e", "AGENTTREE_TOKEN_FILE=/agenttree/token",
		"-e", "AGENTTREE_ISSUE", "-e", "AGENTTREE_ROLE",
		"agent:1", "sh", "-c", filepath.Join(r.bin, "agent.sh")}, "\n")+"\n", args)

	// The values the container takes by name are in the pane's
	// environment, not in its arguments; the token is in neither: the
	// container reads it from the file mounted into it alone.
	got := readAll(t, env)
	assert.Contains(t, got, "AGENTTREE_ISSUE=1\nAGENTTREE_ROLE=developer\nAGENTTREE_TOKEN=\nAGENTTREE_TOKEN_FILE=\n")
	token := strings.TrimSpace(readAll(t, layout.AgentToken(iss.ID)))
	sess, err := api.OpenSessions(r.e.Store.Root()).Lookup(token)
	require.NoError(t, err)
	assert.Equal(t, iss.ID, sess.Issue)
	assert.NotContains(t, args, token)
}

func TestStartInAContainerThatCannotRunLeavesNothing(t *testing.T) {
	tools := t.TempDir()
	for _, tool := range []string{"tmux", "git"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Skip(tool + " is not installed")
		}
		require.NoError(t, os.Symlink(path, filepath.Join(tools, tool)))
	}
	withDocker := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(withDocker, "docker"), []byte(fakeDocker), 0o755))

	for _, tt := range []struct {
		name    string
		sandbox string
		path    string // PATH; empty: the host's
		msg     string
	}{
		{name: "no runtime", sandbox: "podman:agent:1", path: tools,
			msg: "sandbox podman:agent:1: podman is not installed"},
		{name: "no controller", sandbox: "docker:agent:1", path: withDocker + string(os.PathListSeparator) + os.Getenv("PATH"),
			msg: "start the controller first (`agenttree controller`)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, "sandbox: "+tt.sandbox)
			iss := r.create("Boxed", "work")
			t.Setenv("PATH", tt.path)
			_, err := r.m.Start(context.Background(), iss.ID, sessions.Options{})
			require.ErrorIs(t, err, sessions.ErrSandbox)
			assert.Contains(t, err.Error(), tt.msg)
			r.assertNothingMade(iss.Branch)
		})
	}
}

// TestStartInAMissingImageLeavesNothing asks the docker installed here
// for an image no one has: a daemon says it is not there, and without
// one docker cannot tell.
func TestStartInAMissingImageLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not installed")
	}
	r := newRig(t, "sandbox: docker:nosuch")
	iss := r.create("Boxed", "work")
	r.listenController()
	_, err := r.m.Start(context.Background(), iss.ID, sessions.Options{})
	require.ErrorIs(t, err, sessions.ErrSandbox)
	if exec.Command("docker", "info").Run() == nil {
		assert.Contains(t, err.Error(), "sandbox docker:nosuch: there is no image nosuch here; pull it: docker pull nosuch")
	} else {
		assert.Contains(t, err.Error(), "sandbox docker:nosuch: cannot tell whether image nosuch is here")
	}
	r.assertNothingMade(iss.Branch)
}
