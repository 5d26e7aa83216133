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
)

// hostile is what a message may carry from the agent's world (a file
// name a rename/delete conflict reports, a review notice's backticks):
// typed into a shell and submitted, each line would run.
func hostile(marker string) string {
	return "issue 1 waits for your review: `touch " + marker + ".bt` $(touch " + marker + ".dollar)\n" +
		"touch " + marker + ".line\n" + "x; touch " + marker + ".semi"
}

// TestNothingIsTypedIntoAShell starts bash, zsh, fish and sh as a pane's
// program, in the ways a pane comes to run a shell (the person's own
// pane, an agent that exited into a shell, an agent that started a shell
// in front of itself), and delivers a hostile message to each: nothing is
// typed, nothing runs, and the error says a shell is there.
func TestNothingIsTypedIntoAShell(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	ctx := context.Background()
	type pane struct{ name, why string }
	var panes []pane
	for _, sh := range []string{"bash", "zsh", "fish", "sh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; .ci/run installs it", sh)
			}
			t.Logf("%s is not installed: not tried", sh)
			continue
		}
		panes = append(panes,
			pane{sh + "-login", path + " as the pane's program (a person's pane)"},
			pane{sh + "-after", "an agent that exits into " + sh},
			pane{sh + "-job", "an agent that runs " + sh + " in front of itself"},
		)
		// A home of its own: the machine user's rc files are not what
		// is tried, and may be slow.
		dir := shellHome(t, c, sh+"-login", sh+"-after", sh+"-job")
		home := []string{"env", "HOME=" + dir, "HISTFILE=/dev/null"}
		require.NoError(t, c.NewSession(ctx, sh+"-login", dir, append(home, path)...))
		require.NoError(t, c.NewSession(ctx, sh+"-after", dir, append(home, "sh", "-c", "sleep 0.2; exec "+path)...))
		// The agent (sleep in a shell without job control) stays; an
		// interactive shell it started reads the terminal.
		require.NoError(t, c.NewSession(ctx, sh+"-job", dir, append(home, "sh", "-c", path+"; sleep 600")...))
	}
	for _, p := range panes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			marker := filepath.Join(dir, "pwned")
			// Let the shell start and draw its prompt: a delivery in
			// its first moment is not what is being tried.
			require.Eventually(t, func() bool {
				screen, err := c.Capture(ctx, p.name, 10)
				return err == nil && strings.TrimSpace(screen) != ""
			}, 20*time.Second, 50*time.Millisecond, "the shell's prompt")
			for range 2 {
				err := c.Send(ctx, p.name, hostile(marker))
				require.ErrorIs(t, err, tmux.ErrNotAgent, "%s", p.why)
				assert.Contains(t, err.Error(), "shell")
			}
			time.Sleep(300 * time.Millisecond)
			ran, _ := filepath.Glob(marker + "*")
			assert.Empty(t, ran, "%s: typed text ran", p.why)
			screen, err := c.Capture(ctx, p.name, 50)
			require.NoError(t, err)
			assert.NotContains(t, screen, "touch", "%s: text was typed", p.why)
		})
	}
}

// TestTheAgentsProgramIsTypedInto: a program that is not a shell gets
// the message, also when it is a script a shell runs (an agent's wrapper)
// or was started through `sh -c` and exec.
func TestTheAgentsProgramIsTypedInto(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	ctx := context.Background()
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "agent-wrapper")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\ncat > \"$1\"\n"), 0o755))
	tests := []struct {
		name string
		argv func(file string) []string
	}{
		{"exec", func(f string) []string { return []string{"sh", "-c", `exec cat > "$0"`, f} }},
		{"wrapper script", func(f string) []string { return []string{wrapper, f} }},
		{"sh -c without exec", func(f string) []string { return []string{"sh", "-c", `cat > "$0"; sleep 600`, f} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "received")
			name := strings.ReplaceAll(tt.name, " ", "-")
			require.NoError(t, c.NewSession(ctx, name, dir, tt.argv(file)...))
			require.Eventually(t, func() bool { return c.Send(ctx, name, "hello agent") == nil }, 10*time.Second, 100*time.Millisecond)
			received(t, file, "hello agent\n")
		})
	}
}

// TestAProgramInFrontOfTheAgentIsNotTypedInto: a job control shell put
// another program in front of the one tmux started: the text would go to
// that program, which agenttree did not start.
func TestAProgramInFrontOfTheAgentIsNotTypedInto(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	ctx := context.Background()
	// The pane's process is an interactive bash (refused for that alone),
	// running cat as a foreground job.
	dir := t.TempDir()
	require.NoError(t, c.NewSession(ctx, "front", dir, "env", "HOME="+dir, "HISTFILE=/dev/null", "bash", "--norc", "-i"))
	time.Sleep(300 * time.Millisecond)
	tmuxRun(t, c, "send-keys", "-t", "=front:", "cat", "Enter")
	require.Eventually(t, func() bool {
		prog, err := c.Program(ctx, "front")
		return err == nil && prog.Command == "cat"
	}, 10*time.Second, 50*time.Millisecond)
	err := c.Send(ctx, "front", "hello")
	require.ErrorIs(t, err, tmux.ErrNotAgent)
}

// shellHome is a home directory for the shells of sessions, removed when
// t ends, after the sessions (fish writes into its home in the
// background).
func shellHome(t *testing.T, c *tmux.Client, sessions ...string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "home")
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, s := range sessions {
			_ = c.KillSession(context.Background(), s)
		}
		assert.Eventually(t, func() bool { return os.RemoveAll(dir) == nil }, 30*time.Second, 50*time.Millisecond, "remove %s", dir)
	})
	return dir
}
