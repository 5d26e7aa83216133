package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/democmd/demoagent"
	"github.com/agenttree/agenttree/internal/gittest"
)

// The demo's story, played by the scripted agent (`agenttree demo-agent`)
// in a real tmux pane, with the real controller as a process and the local
// forge running real CI: told to implement, it commits and runs `next`;
// the controller opens the PR, CI fails, the failure is typed into its
// pane; meanwhile a change lands on main; the agent fixes CI, runs `next`;
// the controller meets the conflict and says so in the pane; the agent
// rebases, resolves, runs `next`; CI passes; a person approves; merged.
func TestTheScriptedAgentPlaysTheStory(t *testing.T) {
	r := newRig(t, "controller")
	ctl := r.startController(t)
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	branch := r.issue(t, id).Branch
	gittest.Run(t, r.dir, "checkout", "-q", "-b", branch)

	args := []string{"new-session", "-d", "-s", agentSession(id), "-x", "200", "-y", "50", "-c", r.dir,
		"-e", "AGENTTREE_ROLE=developer", "-e", "PATH=" + os.Getenv("PATH")}
	for _, kv := range gittest.Env() {
		args = append(args, "-e", kv)
	}
	r.tmux.run(t, append(args, binary, "demo-agent")...)
	pane := func() string { out, _ := r.tmux.captured(agentSession(id)); return out }
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the agent's pane:\n%s", pane())
		}
	})

	res := r.run(t, humanEnv, "send", itoa(id), "Work on implement.feedback on branch "+branch+", then run `agenttree next`.")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)

	r.waitFor(t, id, "stepped back: CI failed", steppedBack(1))
	r.landOnMain(t, demoagent.Changelog, "- Fix the footer\n")
	r.waitFor(t, id, "stepped back: the conflict", steppedBack(2))
	r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))

	res = r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	r.waitFor(t, id, "accepted", atStage("accepted"))
	stopController(t, ctl)

	merged := gittest.Run(t, r.bare(), "show", "main:"+demoagent.Changelog)
	assert.Equal(t, "- Fix the footer\n"+strings.TrimSuffix(demoagent.ChangelogLine, "\n"), merged, "main holds both changes")
	shown := pane()
	for _, want := range []string{"implementing the checkout page", "CI failed; fixing it", "resolving the conflict", "resolved " + demoagent.Changelog} {
		assert.Contains(t, shown, want)
	}
}
