package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
)

// repeatedSegment is the first segment of an error chain (the parts
// between ": ") said twice, as "push X to origin: push X to origin: …"
// did; "" when each is said once.
func repeatedSegment(text string) string {
	seen := map[string]bool{}
	for _, seg := range strings.Split(text, ": ") {
		seg = strings.TrimSpace(seg)
		if len(seg) < 4 {
			continue
		}
		if seen[seg] {
			return seg
		}
		seen[seg] = true
	}
	return ""
}

func TestRepeatedSegment(t *testing.T) {
	assert.Equal(t, "push issue-1 to origin", repeatedSegment("push issue-1 to origin: push issue-1 to origin: rejected"))
	assert.Empty(t, repeatedSegment("push issue-1 to origin: branch issue-1 does not exist here"))
}

const errorChainPipeline = `project: shop
forge: local
tmux: {socket: %q}
stages:
  - name: implement
  - name: pr_ready
    host: controller
    post_start: [create_pr]
    on_failure: {step_back_to: implement}
  - name: accepted
    terminal: completion
`

// The errors of two common failures say each thing once: a PR the
// controller cannot open (no origin) names its hook once, and a message
// that finds no tmux server names the agent's session at most twice, with
// no tmux command line in it.
func TestErrorChainsSayEachThingOnce(t *testing.T) {
	gittest.Require(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	gittest.Isolate(t)
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	gittest.Commit(t, dir, ".agenttree.yaml", strings.ReplaceAll(errorChainPipeline, "%q", `"`+filepath.Join(dir, "no-tmux-server")+`"`), "pipeline")
	w := &workspace{dir: dir, config: filepath.Join(dir, ".agenttree.yaml")}
	id := w.create(t, "Add checkout page", "--stage", "implement")
	res := w.run(t, humanEnv, "send", itoa(id), "look at the labels")
	require.Equal(t, exitOK, res.code, res.stderr)
	res = w.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	res = w.run(t, humanEnv, "controller", "--once")
	require.NotEqual(t, exitUsage, res.code, "stdout %s stderr %s", res.stdout, res.stderr)

	res = w.run(t, humanEnv, "inbox", itoa(id), "--json")
	require.Equal(t, exitOK, res.code, res.stderr)
	var box struct {
		Undelivered []struct {
			LastError string `json:"last_error"`
		} `json:"undelivered"`
		Recent []struct {
			Kind, Text string
		} `json:"recent"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &box), res.stdout)

	var entry string
	for _, m := range box.Recent {
		if m.Kind == "entry" || m.Kind == "step_back" {
			entry = m.Text
		}
	}
	require.NotEmpty(t, entry, "the failure is told: %s", res.stdout)
	assert.Contains(t, entry, "no remote \"origin\"")
	assert.Equal(t, 1, strings.Count(entry, "create_pr"), "the hook is named once: %s", entry)
	assert.Empty(t, repeatedSegment(entry), entry)

	require.NotEmpty(t, box.Undelivered, res.stdout)
	why := box.Undelivered[0].LastError
	require.NotEmpty(t, why, res.stdout)
	assert.LessOrEqual(t, strings.Count(why, "shop-developer-1"), 2, "the session is named at most twice: %s", why)
	assert.NotContains(t, why, "#{pane_id}", "no tmux command line: %s", why)
	assert.Empty(t, repeatedSegment(why), why)
}
