package tmux

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A program that turns into a shell once the text is pasted (it reads a
// byte, then execs bash) gets no Enter: the pane is checked again before
// each key, and the pasted line never runs.
func TestNoEnterForAShellThatCameAfterThePaste(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	dir, err := os.MkdirTemp("", "tmux-enter-")
	require.NoError(t, err)
	sock := filepath.Join(dir, "sock")
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-S", sock, "kill-server").Run()
		assert.Eventually(t, func() bool { return os.RemoveAll(dir) == nil }, 30*time.Second, 50*time.Millisecond)
	})
	c := &Client{Socket: sock, LockDir: dir}
	ctx := context.Background()
	require.NoError(t, c.NewSession(ctx, "turncoat", dir, "env", "HOME="+dir, "HISTFILE=/dev/null", "sh", "-c",
		"stty -icanon; dd bs=1 count=1 >/dev/null 2>&1; exec bash --norc -i"))
	pane, err := c.Pane(ctx, "turncoat")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.readyForInput(ctx, pane) == nil }, 30*time.Second, 50*time.Millisecond, "the pane takes input")

	marker := filepath.Join(dir, "pwned")
	require.NoError(t, c.paste(ctx, pane, "xtouch "+marker))
	// The byte read, bash holds the rest of the line.
	require.Eventually(t, func() bool {
		err := c.stillTheAgent(ctx, pane)
		return errors.Is(err, ErrNotAgent)
	}, 30*time.Second, 50*time.Millisecond, "bash took the pane")
	err = c.submit(ctx, pane, "xtouch "+marker)
	require.ErrorIs(t, err, ErrNotAgent)
	time.Sleep(500 * time.Millisecond)
	assert.NoFileExists(t, marker, "the pasted line ran")
}
