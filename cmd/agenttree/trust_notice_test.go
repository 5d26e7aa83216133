package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
)

// shellsToTry are the shells a person's or a hijacked pane may run; CI
// installs them all (.ci/run).
func shellsToTry(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if _, err := exec.LookPath(sh); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; .ci/run installs it", sh)
			}
			t.Logf("%s is not installed: not tried", sh)
			continue
		}
		out = append(out, sh)
	}
	return out
}

// startShell starts session name on s running sh as a person's
// interactive shell, with a home of its own (no rc files of the machine's
// user), and waits for its prompt.
func (s *tmuxServer) startShell(t *testing.T, name, sh string) {
	t.Helper()
	home, err := os.MkdirTemp("", "home")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".zshrc"), nil, 0o644))
	s.run(t, "new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", home, "-e", "HOME="+home, "--", sh)
	t.Cleanup(func() {
		// The shell and what it started in the background (fish makes
		// completions) end before their home goes.
		_, _ = s.output("kill-session", "-t", "="+name)
		assert.Eventually(t, func() bool { return os.RemoveAll(home) == nil }, settleWithin, lookEvery, "remove %s", home)
	})
	require.Eventually(t, func() bool {
		out, err := s.captured(name)
		return err == nil && strings.TrimSpace(out) != ""
	}, settleWithin, lookEvery, "the prompt of %s", sh)
}

// attachViewer attaches a tmux client to session name of s from a pane of
// a server of its own, as a person's terminal would be, and returns that
// server: what the client shows (its status line included) is its
// viewer pane.
func (s *tmuxServer) attachViewer(t *testing.T, name string) *tmuxServer {
	t.Helper()
	viewer := newTmuxServer(t)
	viewer.run(t, "new-session", "-d", "-s", "viewer", "-x", "220", "-y", "20", "--",
		"env", "-u", "TMUX", "tmux", "-S", s.socket, "attach-session", "-t", "="+name)
	require.Eventually(t, func() bool {
		out, err := s.output("list-clients", "-t", "="+name)
		return err == nil && strings.TrimSpace(out) != ""
	}, settleWithin, lookEvery, "a client attached to %s", name)
	return viewer
}

// A person's notice is shown, never typed: with `tmux.manager` naming a
// person's bash, zsh or fish pane, the review notice, which quotes
// `agenttree approve N` in backticks and carries the title an issue was
// given, is shown on the status line of the person's terminal; nothing is
// typed into the shell and nothing in it runs. Before, the notice was
// pasted and submitted: zsh ran the backticks and approved every issue
// the moment it reached review.
func TestNoticesToPeopleAreShownNeverTyped(t *testing.T) {
	for _, sh := range shellsToTry(t) {
		t.Run(sh, func(t *testing.T) {
			r := newRigTmux(t, "controller", "  manager: person\n")
			r.tmux.startShell(t, "person", sh)
			viewer := r.tmux.attachViewer(t, "person")
			// What the title carries leaves a mark when it runs (in a
			// short directory: a title is at most 200 characters).
			marks := shortDir(t)
			title := fmt.Sprintf("Checkout `touch %s/bt` $(touch %s/dollar) #(touch %s/fmt)", marks, marks, marks)

			ctl := r.startController(t)
			id := r.create(t, title, "--stage", "implement.feedback")
			r.tmux.startAgent(t, agentSession(id))
			a := r.agentWorktree(t, id)
			a.commitWork(t)
			a.next(t, id)
			r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))

			var notice outbox.Message
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				box, err := r.outbox(id).Recent(0)
				require.NoError(c, err)
				i := slices.IndexFunc(box, func(m outbox.Message) bool {
					return m.To == outbox.ToManager && m.Kind == "review" && m.State == outbox.Sent
				})
				require.GreaterOrEqual(c, i, 0, "the review notice is delivered: %+v", box)
				notice = box[i]
			}, settleWithin, lookEvery)
			assert.Contains(t, notice.Text, "`agenttree approve "+strconv.Itoa(id)+"`")

			// Shown on the person's status line, as it is.
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				screen, err := viewer.captured("viewer")
				require.NoError(c, err)
				require.Contains(c, screen, outbox.Marker(notice)+" issue "+strconv.Itoa(id), "the person's terminal shows the notice")
				require.Contains(c, screen, "#(touch", "tmux's format characters are shown, not run")
			}, settleWithin, lookEvery)

			// Never typed into the shell, and nothing of it ran.
			time.Sleep(time.Second) // what would have run has had its time
			ran, err := filepath.Glob(filepath.Join(marks, "*"))
			require.NoError(t, err)
			assert.Empty(t, ran, "something the notice carries ran")
			pane := r.tmux.capture(t, "person")
			assert.NotContains(t, pane, "waits for your review", "the notice was typed into the person's shell")
			assert.Equal(t, "implementation_review", r.issue(t, id).Stage, "nobody approved it")
			stopController(t, ctl)
		})
	}
}

// An agent's pane that runs a shell is typed nothing into: an agent that
// exited into a shell, or a session whose program a person replaced with
// one. The message waits in the outbox, and `inbox` says why.
func TestAShellInTheAgentsPaneGetsNothing(t *testing.T) {
	for _, sh := range shellsToTry(t) {
		t.Run(sh, func(t *testing.T) {
			r := newRig(t, "controller")
			ctl := r.startController(t)
			id := r.create(t, "Add checkout page", "--stage", "implementation_review")
			r.tmux.startShell(t, agentSession(id), sh)
			marks := shortDir(t)
			res := r.run(t, humanEnv, "reject", itoa(id), "--message", fmt.Sprintf("touch %s/line\n$(touch %s/dollar)", marks, marks))
			require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)

			require.EventuallyWithT(t, func(c *assert.CollectT) {
				box, err := r.outbox(id).Pending()
				require.NoError(c, err)
				i := slices.IndexFunc(box, func(m outbox.Message) bool { return m.To == outbox.ToAgent })
				require.GreaterOrEqual(c, i, 0, "the message waits")
				require.Contains(c, box[i].LastError, "shell", "and says why")
			}, settleWithin, lookEvery)
			time.Sleep(time.Second)
			ran, err := filepath.Glob(filepath.Join(marks, "*"))
			require.NoError(t, err)
			assert.Empty(t, ran, "the rejection's text ran in the shell")
			assert.NotContains(t, r.tmux.capture(t, agentSession(id)), "sent back", "typed into the shell")

			inbox := r.run(t, humanEnv, "inbox", itoa(id))
			assert.Contains(t, inbox.stdout+inbox.stderr, "shell", "inbox says why it waits")
			stopController(t, ctl)
		})
	}
}

// shortDir is a new directory with a short path, removed when t ends.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "m")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
