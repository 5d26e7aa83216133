package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
)

// step is one command of the README's walkthrough and what the README
// shows it printed.
type step struct {
	who     string // person, agent, controller or log: the block's tag
	command string
	shown   []string
}

// walkthrough reads the steps of the README's walkthrough: each ```console
// block after a `<!-- walkthrough: WHO -->` tag, `$ ` lines as commands.
func walkthrough(t *testing.T, readme string) []step {
	t.Helper()
	data, err := os.ReadFile(readme)
	require.NoError(t, err)
	var steps []step
	who, inBlock := "", false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "<!-- walkthrough: "):
			who = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- walkthrough: "), " -->")
		case who != "" && line == "```console":
			inBlock = true
		case inBlock && line == "```":
			inBlock, who = false, ""
		case inBlock && strings.HasPrefix(line, "$ "):
			cmd, _, _ := strings.Cut(strings.TrimPrefix(line, "$ "), "  #")
			steps = append(steps, step{who: who, command: strings.TrimSpace(cmd)})
		case inBlock && who == "log":
			steps = append(steps, step{who: who, shown: []string{line}})
		case inBlock && len(steps) > 0:
			steps[len(steps)-1].shown = append(steps[len(steps)-1].shown, line)
		}
	}
	require.NotEmpty(t, steps, "no walkthrough in %s", readme)
	return steps
}

// volatile are the parts of an output that differ from run to run: how
// long ago, and runs of spaces that line up a table around them.
var volatile = regexp.MustCompile(`\b\d+(m\d+)?s\b|  +`)

func normal(line string) string { return volatile.ReplaceAllString(strings.TrimSpace(line), " ") }

// TestTheREADMEWalkthrough runs the README's five-minute walkthrough as
// written, in a fresh clone named shop of a bare origin, with the local
// forge (as the README says its outputs were captured), real tmux, the
// controller as a process and a stand-in for the agent's program. Every
// line the README shows a command printing must be printed.
func TestTheREADMEWalkthrough(t *testing.T) {
	steps := walkthrough(t, filepath.Join("..", "..", "README.md"))
	root := t.TempDir()
	repo := filepath.Join(root, "shop")
	gittest.Run(t, root, "init", "-q", "--bare", "--initial-branch=main", "origin.git")
	gittest.Run(t, root, "clone", "-q", "origin.git", "shop")
	gittest.Run(t, repo, "checkout", "-q", "-B", "main")
	gittest.Commit(t, repo, "Makefile", "test:\n\ttest -f health.txt\n", "Makefile")
	gittest.Run(t, repo, "push", "-q", "origin", "main")

	// The agent's program: it reads what it is told and runs nothing.
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755))
	require.NoError(t, os.Symlink(binary, filepath.Join(bin, "agenttree")))
	tmuxDir := filepath.Join(root, "tmux")
	require.NoError(t, os.MkdirAll(tmuxDir, 0o700))
	env := append(processEnv(gittest.Env()...), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMUX_TMPDIR="+tmuxDir)
	t.Cleanup(func() {
		kill := exec.Command("tmux", "kill-server")
		kill.Env = env
		_ = kill.Run()
	})
	worktree := filepath.Join(root, "shop-worktrees", "issue-001-add-a-health-check")

	sh := func(dir, command string, extra ...string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", command)
		cmd.Dir, cmd.Env = dir, append(env, extra...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s:\n%s", command, out)
		return string(out)
	}
	var controllerLog bytes.Buffer
	var controller *exec.Cmd
	agentWork := []func(){
		func() { gittest.Commit(t, worktree, "health.txt", "ok\n", "Add a health check") },
		func() {
			review := "# Review\n\n## Critical Issues\n\n## Checklist\n\n- [x] tests cover the change\n"
			require.NoError(t, os.WriteFile(filepath.Join(repo, "_agenttree", "issues", "001", "review.md"), []byte(review), 0o644))
		},
	}
	for _, s := range steps {
		var out string
		switch {
		case s.command == "cd shop":
			continue
		case s.who == "controller":
			controller = exec.Command(binary, "controller", "--interval", "1s")
			controller.Dir, controller.Env = repo, env
			controller.Stdout, controller.Stderr = &controllerLog, &controllerLog
			require.NoError(t, controller.Start())
			t.Cleanup(func() { _ = controller.Process.Kill(); _ = controller.Wait() })
			require.Eventually(t, func() bool { return strings.Contains(controllerLog.String(), "answering agents") }, 10*time.Second, 20*time.Millisecond)
			continue
		case s.who == "log":
			msg := regexp.MustCompile(`msg="[^"]*"`).FindString(s.shown[0])
			require.NotEmpty(t, msg, s.shown[0])
			require.Eventually(t, func() bool { return strings.Contains(controllerLog.String(), msg) }, 60*time.Second, 100*time.Millisecond,
				"the controller never logged %s:\n%s", msg, &controllerLog)
			continue
		case s.who == "agent":
			require.NotEmpty(t, agentWork, "more agent steps than the test knows the work of")
			agentWork[0]()
			agentWork = agentWork[1:]
			out = sh(worktree, s.command, "AGENTTREE_ISSUE=1", "AGENTTREE_ROLE=developer")
		case readOnly(s.command):
			// What it shows comes about in the background (a message
			// delivered, the controller's pass): ask until it is so.
			require.Eventually(t, func() bool {
				out = sh(repo, s.command)
				return len(missing(out, s.shown, root)) == 0
			}, 60*time.Second, 200*time.Millisecond, "`%s` printed:\n%s\ncontroller:\n%s", s.command, &out, &controllerLog)
		default:
			out = sh(repo, s.command)
		}
		if strings.HasPrefix(s.command, "agenttree init") {
			// As the README says its outputs were captured: offline.
			cfg := filepath.Join(repo, ".agenttree.yaml")
			data, err := os.ReadFile(cfg)
			require.NoError(t, err)
			text := strings.Replace(string(data), "forge: github\n", "forge: local\nci: {command: make test}\n", 1)
			text = strings.Replace(text, "ci_polling:\n", "ci_polling:\n  poll_interval_s: 1\n  min_interval_s: 1\n", 1)
			require.NoError(t, os.WriteFile(cfg, []byte(text), 0o644))
		}
		for _, line := range missing(out, s.shown, root) {
			assert.Fail(t, "a line the README shows is not printed", "`%s` did not print %q; it printed:\n%s", s.command, line, out)
		}
	}
	assert.Empty(t, agentWork, "agent steps the README no longer shows")
	assert.NoDirExists(t, worktree, "clean removed the finished issue's worktree")
}

// readOnly reports whether a walkthrough command only reads.
func readOnly(command string) bool {
	return command == "agenttree agents" || command == "agenttree status"
}

// missing are the lines of shown, up to an elision ("..."), that out does
// not print, with the README's home directory standing for root.
func missing(out string, shown []string, root string) []string {
	got := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		got[normal(line)] = true
	}
	var lost []string
	for _, line := range shown {
		if strings.TrimSpace(line) == "..." {
			break
		}
		if line = strings.ReplaceAll(line, "/home/ada", root); !got[normal(line)] {
			lost = append(lost, line)
		}
	}
	return lost
}
