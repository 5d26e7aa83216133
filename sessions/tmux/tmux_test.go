package tmux_test

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

	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/sessions/tmux/tmuxtest"
)

// newServer starts a private tmux server for t and returns a client of
// it. The socket lives in a short directory of its own (socket paths are
// limited to about 100 bytes), the server reads an empty configuration
// (not the developer's), and a session of its own keeps it running until
// the test ends.
func newServer(t *testing.T) *tmux.Client {
	t.Helper()
	return &tmux.Client{Socket: tmuxtest.Server(t), LockDir: t.TempDir()}
}

// tmuxRun runs a tmux command on c's server, for what the tests do to a
// pane by hand (enter copy mode, read an option).
func tmuxRun(t *testing.T, c *tmux.Client, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", c.Socket}, args...)...).CombinedOutput()
	require.NoError(t, err, "tmux %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// catToFile is a pane's program that writes each line typed into it to
// the file "$1".
const catToFile = `cat > "$1"`

// reader starts a session whose pane runs script, a shell script that
// writes what is typed into it to the file "$1" (catToFile, with a
// terminal mode set before, say), and returns the pane id and the file.
func reader(t *testing.T, c *tmux.Client, name, script string) (pane, file string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	file = filepath.Join(dir, "received")
	require.NoError(t, c.NewSession(ctx, name, dir, "sh", "-c", script, "sh", file))
	pane, err := c.Pane(ctx, name)
	require.NoError(t, err)
	return pane, file
}

// received waits until file holds want and fails the test with what it
// holds otherwise.
func received(t *testing.T, file, want string) {
	t.Helper()
	var got string
	ok := assert.Eventually(t, func() bool {
		data, _ := os.ReadFile(file)
		got = string(data)
		return got == want
	}, 5*time.Second, 10*time.Millisecond)
	if !ok {
		assert.Equal(t, want, got, "what the pane's program read")
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)

	require.NoError(t, c.NewSession(ctx, "agent-1", t.TempDir(), "sleep", "60"))
	require.NoError(t, c.NewSession(ctx, "agent-10", t.TempDir(), "sleep", "60"))

	for name, want := range map[string]bool{"agent-1": true, "agent-10": true, "agent": false, "agent-": false, "nope": false} {
		ok, err := c.HasSession(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, want, ok, "HasSession(%q): names match exactly, not by prefix", name)
	}

	p1, err := c.Pane(ctx, "agent-1")
	require.NoError(t, err)
	p10, err := c.Pane(ctx, "agent-10")
	require.NoError(t, err)
	assert.Regexp(t, `^%\d+$`, p1)
	assert.NotEqual(t, p1, p10)
	again, err := c.Pane(ctx, p1)
	require.NoError(t, err)
	assert.Equal(t, p1, again, "a pane id resolves to itself")
	window, err := c.Pane(ctx, "agent-10:0")
	require.NoError(t, err)
	assert.Equal(t, p10, window)
	_, err = c.Pane(ctx, "agent-10:0.0")
	assert.ErrorContains(t, err, "by its id", "a pane by position is refused, not taken for the window's active pane")

	require.NoError(t, c.KillSession(ctx, "agent-1"))
	ok, err := c.HasSession(ctx, "agent-1")
	require.NoError(t, err)
	assert.False(t, ok)
	ok, err = c.HasSession(ctx, "agent-10")
	require.NoError(t, err)
	assert.True(t, ok, "ending agent-1 left agent-10 alone")
}

func TestNewSessionRunsArgvWithoutAShell(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	// Each argument arrives as it is: no word splitting, no expansion.
	require.NoError(t, c.NewSession(ctx, "args", dir, "sh", "-c", `printf '%s|' "$@" > "$0"; pwd >> "$0"`, out, "a b", "$HOME", ";x"))
	received(t, out, "a b|$HOME|;x|"+dir+"\n")
}

func TestMissingSessionOrServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)
	dead := &tmux.Client{Socket: filepath.Join(t.TempDir(), "no-server"), LockDir: t.TempDir()}

	for _, tc := range []struct {
		name   string
		client *tmux.Client
		target string
	}{
		{"no such session", c, "nope"},
		{"no such pane", c, "%999"},
		{"no such window", c, "idle:7"},
		{"no server", dead, "idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := tc.client.HasSession(ctx, tc.target)
			require.NoError(t, err)
			assert.False(t, ok)

			_, err = tc.client.Pane(ctx, tc.target)
			require.ErrorIs(t, err, tmux.ErrNoSession)
			assert.Contains(t, err.Error(), tc.target)

			err = tc.client.Send(ctx, tc.target, "hello")
			assert.ErrorIs(t, err, tmux.ErrNoSession)

			_, err = tc.client.Capture(ctx, tc.target, 10)
			assert.ErrorIs(t, err, tmux.ErrNoSession)
		})
	}
	err := c.KillSession(ctx, "nope")
	require.ErrorIs(t, err, tmux.ErrNoSession)
	assert.Contains(t, err.Error(), "nope")
}

func TestErrorNamesTheCommandAndWhatTmuxSaid(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	err := c.NewSession(context.Background(), "idle", "")
	require.Error(t, err)
	var terr *tmux.Error
	require.ErrorAs(t, err, &terr)
	assert.Equal(t, 1, terr.ExitCode)
	assert.Contains(t, err.Error(), "new-session -d -s idle")
	assert.Contains(t, err.Error(), c.Socket)
	assert.Contains(t, err.Error(), "duplicate session")
	assert.NotErrorIs(t, err, tmux.ErrNoSession)
}

func TestCommandsStopWithTheContext(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.HasSession(ctx, "idle")
	assert.ErrorIs(t, err, context.Canceled)
}

// A server exiting as it is asked (kill-server just returned, or its last
// session ended) is no server: a session on it is missing, not an error.
func TestAServerThatExitedIsNoSession(t *testing.T) {
	t.Parallel()
	err := error(&tmux.Error{Stderr: "server exited unexpectedly"})
	assert.ErrorIs(t, err, tmux.ErrNoSession)
	err = &tmux.Error{Stderr: "error connecting to /tmp/x (Permission denied)"}
	assert.NotErrorIs(t, err, tmux.ErrNoSession, "a server it may not reach is there")
}
