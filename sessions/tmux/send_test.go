package tmux_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/sessions/tmux"
)

// sendEnv makes the test binary a sender: it types the text in
// sendTextEnv into the pane sendEnv names on the server sendSocketEnv,
// with locks in sendLockEnv, and exits 0 when Send succeeded.
const (
	sendEnv       = "TMUX_TEST_SEND_PANE"
	sendSocketEnv = "TMUX_TEST_SEND_SOCKET"
	sendLockEnv   = "TMUX_TEST_SEND_LOCKS"
	sendTextEnv   = "TMUX_TEST_SEND_TEXT"
)

func TestMain(m *testing.M) {
	if pane := os.Getenv(sendEnv); pane != "" {
		c := &tmux.Client{Socket: os.Getenv(sendSocketEnv), LockDir: os.Getenv(sendLockEnv)}
		if err := c.Send(context.Background(), pane, os.Getenv(sendTextEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSendTypesTheTextAndSubmitsIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)

	long := numbered("line", 2000)
	tests := []struct {
		name, text, want string
	}{
		{"one line", "CI failed: test-unit", "CI failed: test-unit\n"},
		{"several lines arrive as one message", "first\n  indented\n\ttabbed\nlast", "first\n  indented\n\ttabbed\nlast\n"},
		{"trailing newlines do not submit early", "done\n\n", "done\n"},
		{
			"tmux and shell syntax stays text",
			"-t idle; kill-server; $(touch pwned) `touch pwned` #{pane_id} ${HOME} \\; 'q' \"dq\"",
			"-t idle; kill-server; $(touch pwned) `touch pwned` #{pane_id} ${HOME} \\; 'q' \"dq\"\n",
		},
		{"escape sequences stripped", "\x1b[31mred\x1b[0m and \x1b]0;title\x07plain\u009b2J text\x1b[?1049h", "red and plain text\n"},
		{"2,000 lines arrive whole", long, long + "\n"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pane, file := reader(t, c, fmt.Sprintf("send-%d", i), catToFile)
			require.NoError(t, c.Send(ctx, pane, tt.text))
			received(t, file, tt.want)

			shown, err := c.Capture(ctx, pane, 0)
			require.NoError(t, err)
			assert.Contains(t, shown, lastLine(tt.want), "the pane shows what was typed")
		})
	}
	alive, err := c.HasSession(ctx, "idle")
	require.NoError(t, err)
	assert.True(t, alive, "no message ran as a tmux command (kill-server)")
}

func TestSendBySessionName(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	_, file := reader(t, c, "agent-7", catToFile)
	require.NoError(t, c.Send(context.Background(), "agent-7", "hello"))
	received(t, file, "hello\n")
}

func TestSendIsABracketedPaste(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	// The program asks for bracketed paste, as agents' input boxes do:
	// the paste then arrives between the markers, newlines and all, and
	// only the Enter after it submits.
	_, file := reader(t, c, "bracketed", `printf '\033[?2004h'; `+catToFile)
	require.NoError(t, c.Send(context.Background(), "bracketed", "a\nb"))
	received(t, file, "\x1b[200~a\nb\x1b[201~\n")
}

func TestSendLeavesAModeFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)
	for _, mode := range []string{"copy-mode", "clock-mode"} {
		t.Run(mode, func(t *testing.T) {
			pane, file := reader(t, c, mode, catToFile)
			tmuxRun(t, c, mode, "-t", pane)
			require.Equal(t, "1", tmuxRun(t, c, "display-message", "-p", "-t", pane, "#{pane_in_mode}"))

			require.NoError(t, c.Send(ctx, pane, "after "+mode))
			received(t, file, "after "+mode+"\n")
			assert.Equal(t, "0", tmuxRun(t, c, "display-message", "-p", "-t", pane, "#{pane_in_mode}"))
		})
	}
}

func TestSendToAPaneThatCannotTakeInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)

	require.NoError(t, c.NewSession(ctx, "exited", t.TempDir(), "sh", "-c", "read x"))
	tmuxRun(t, c, "set-option", "-t", "=exited:", "remain-on-exit", "on")
	tmuxRun(t, c, "send-keys", "-t", "=exited:", "x", "Enter")
	require.Eventually(t, func() bool {
		return tmuxRun(t, c, "display-message", "-p", "-t", "=exited:", "#{pane_dead}") == "1"
	}, 5*time.Second, 10*time.Millisecond)
	assert.ErrorIs(t, c.Send(ctx, "exited", "hello"), tmux.ErrPaneBusy)

	pane, file := reader(t, c, "input-off", catToFile)
	tmuxRun(t, c, "select-pane", "-d", "-t", pane)
	assert.ErrorIs(t, c.Send(ctx, pane, "hello"), tmux.ErrPaneBusy)
	tmuxRun(t, c, "select-pane", "-e", "-t", pane)
	require.NoError(t, c.Send(ctx, pane, "hello"))
	received(t, file, "hello\n")

	assert.ErrorContains(t, c.Send(ctx, pane, "\x1b[31m\x07\n"), "empty")
}

// A program that takes the line without showing it (an agent folding a
// long paste into one line) is a delivery: the pane changed on Enter.
func TestSendTakenWithoutShowingIsConfirmed(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	_, file := reader(t, c, "folding", `stty -echo; while IFS= read -r l; do echo "[pasted text]"; printf '%s\n' "$l" >> "$1"; done`)
	require.NoError(t, c.Send(context.Background(), "folding", "hello"))
	received(t, file, "hello\n")
}

func TestSendNotShownIsNotConfirmed(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	// Echo off: the program reads the line, but the pane never shows it.
	tests := []struct {
		name, script, wantErr, wantRead string
	}{
		{
			// Nor does the pane change when Enter is pressed, so Enter is
			// pressed again, three times more.
			"the pane does not change", "stty -echo; exec " + catToFile,
			"did not change after Enter, pressed 4 times", "hello\n\n\n\n",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pane, file := reader(t, c, fmt.Sprintf("silent-%d", i), tt.script)
			// Past the script's stty: its shell, between two programs,
			// is refused as a shell, which is not what this test asks.
			require.Eventually(t, func() bool {
				return tmuxRun(t, c, "display-message", "-p", "-t", pane, "#{pane_current_command}") == "cat"
			}, 10*time.Second, 10*time.Millisecond)
			err := c.Send(context.Background(), fmt.Sprintf("silent-%d", i), "hello")
			require.ErrorIs(t, err, tmux.ErrNotConfirmed)
			assert.ErrorContains(t, err, tt.wantErr)
			received(t, file, tt.wantRead)
		})
	}
}

// Text typed into a pane goes with it: Enter for it is pressed in that
// pane, and not in the one its session has once the program was started
// again (respawned) or the server was (killed: a reboot). The caller
// types it again there (controller/delivery).
func TestSubmitOnlyInThePaneTypedInto(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)
	stop := errors.New("stopped before Enter")
	typeOnly := func(target, text string) (into string) {
		t.Helper()
		err := c.SendTyped(ctx, target, text, func(where string) error { into = where; return stop })
		require.ErrorIs(t, err, stop)
		require.NotEmpty(t, into)
		return into
	}
	pane, file := reader(t, c, "agent", catToFile)
	require.NoError(t, c.Submit(ctx, "agent", "first", typeOnly(pane, "first")))
	received(t, file, "first\n")

	into := typeOnly("agent", "second")
	tmuxRun(t, c, "respawn-pane", "-k", "-t", pane, "sh", "-c", catToFile, "sh", file+"2")
	require.ErrorIs(t, c.Submit(ctx, "agent", "second", into), tmux.ErrNoSession, "the program typed into was replaced")

	into = typeOnly("agent", "third")
	tmuxRun(t, c, "kill-server")
	// kill-server returns before the server has exited.
	require.Eventually(t, func() bool {
		out, err := exec.Command("tmux", "-S", c.Socket, "list-sessions").CombinedOutput()
		return err != nil && !strings.Contains(string(out), "server exited unexpectedly")
	}, 10*time.Second, 10*time.Millisecond, "the server is gone")
	_, again := reader(t, c, "agent", catToFile)
	require.ErrorIs(t, c.Submit(ctx, "agent", "third", into), tmux.ErrNoSession, "the server typed into was killed")
	require.NoError(t, c.Send(ctx, "agent", "fourth"))
	received(t, again, "fourth\n")
	data, _ := os.ReadFile(file + "2")
	assert.Empty(t, string(data), "no Enter in the respawned pane")
}

func TestSendersTakeTurnsAcrossProcesses(t *testing.T) {
	t.Parallel()
	c := newServer(t)
	pane, file := reader(t, c, "shared", catToFile)
	bin, err := os.Executable()
	require.NoError(t, err)

	blocks := map[string]string{}
	var cmds []*exec.Cmd
	for _, who := range []string{"A", "B", "C"} {
		blocks[who] = numbered(who, 150)
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), sendEnv+"="+pane, sendSocketEnv+"="+c.Socket,
			sendLockEnv+"="+c.LockDir, sendTextEnv+"="+blocks[who])
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		assert.NoError(t, cmd.Wait())
	}

	// Each message arrives whole: its lines together, ended by its own
	// Enter, never another's lines in the middle.
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(file)
		return strings.Count(string(data), "\n") == 3*150
	}, 30*time.Second, 10*time.Millisecond)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	got := string(data)
	for who, block := range blocks {
		assert.Contains(t, got, block+"\n", "message %s arrived whole", who)
	}
}

// numbered is n lines "prefix 0001 ..." joined by newlines.
func numbered(prefix string, n int) string {
	ls := make([]string, n)
	for i := range ls {
		ls[i] = fmt.Sprintf("%s %04d of %d", prefix, i+1, n)
	}
	return strings.Join(ls, "\n")
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return ls[len(ls)-1]
}
