package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/engine/issues"
)

// limitedAgent reads its first message for a while, then ends as an
// agent whose provider refused it more requests.
const limitedAgent = "#!/bin/sh\nsleep 2\necho 'API Error: 429 rate limit reached for requests'\nexit 1\n"

const limitedPipeline = `project: shop
tmux: {socket: %q}
agents:
  limited: {command: %q}
roles:
  developer: {agents: [limited]}
stages:
  - name: work
  - name: accepted
    terminal: completion
`

// An agent that hit a rate limit waits for the controller to restart it:
// status says so and when, not "agent working"; before any agent runs,
// status says none does and how to start one.
func TestStatusShowsARateLimitedAgent(t *testing.T) {
	server := newTmuxServer(t)
	agent := filepath.Join(t.TempDir(), "limited-agent")
	require.NoError(t, os.WriteFile(agent, []byte(limitedAgent), 0o755))
	w := newForgeRepo(t, fmt.Sprintf(limitedPipeline, server.socket, agent))
	store, err := issues.Open(filepath.Join(w.dir, "_agenttree"))
	require.NoError(t, err)
	logPath := filepath.Join(t.TempDir(), "controller.log")
	log, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("controller log:\n%s", data)
		}
	})
	r := &rig{workspace: w, tmux: server, issues: store, log: log}
	id := r.create(t, "Dark mode", "--stage", "work")

	res := r.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "no developer agent is running: start one with `agenttree start 1`")
	assert.NotContains(t, res.stdout, "agent working")

	res = r.run(t, humanEnv, "start", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	ctl := r.startController(t)
	defer stopController(t, ctl)

	var row statuscmd.Row
	require.Eventually(t, func() bool {
		res := r.run(t, humanEnv, "status", "--json")
		var rows []statuscmd.Row
		if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &rows) != nil || len(rows) != 1 {
			return false
		}
		row = rows[0]
		return strings.HasPrefix(row.WaitingOn, "rate-limited")
	}, settleWithin, lookEvery, "the controller sees the agent rate-limited: %+v", row)
	assert.Regexp(t, `^rate-limited: the developer agent limited restarts at \d\d:\d\d$`, row.WaitingOn)
	assert.Equal(t, statuscmd.WaiterController, row.WaitingFor)

	res = r.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Regexp(t, `1\s+work\s+agent: developer\s+rate-limited: the developer agent limited restarts at \d\d:\d\d\s+accepted\s+Dark mode`, res.stdout)
	assert.NotContains(t, res.stdout, "agent working")
	res = r.run(t, humanEnv, "status", itoa(id), "--block")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "rate-limited: the developer agent limited restarts at ")
}

// A pipeline with no terminal stage: validate warns, with the stage to
// add; an issue at the last stage of its flow is stuck there, and status
// says so and what to do, never "agent working".
func TestStatusAtTheEndOfAFlowWithNoTerminalStage(t *testing.T) {
	w := newWorkspace(t, "stages:\n  - name: backlog\n    parking_lot: true\n  - name: implement\n  - name: review\n")
	res := w.run(t, humanEnv, "validate")
	require.Equal(t, exitOK, res.code, "a warning, not an error: %s", res.stderr)
	assert.Contains(t, res.stdout, "ok (canonical form, 3 stages, flows: default, 1 warning)")
	assert.Contains(t, res.stderr, w.config+":1:1: warning: flow \"default\" has no terminal stage, nor has any stage of the pipeline: "+
		"an issue on it is never done, and stays at review for good (add the stage issues end in, last in `stages:` (and in each flow of `flows:`): "+
		"`- name: accepted` with `terminal: completion`)")
	id := w.create(t, "Add login page", "--stage", "review")

	res = w.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Regexp(t, `1\s+review\s+agent: developer\s+a person: review is the last stage of flow default`, res.stdout)
	assert.NotContains(t, res.stdout, "agent working")
	res = w.run(t, humanEnv, "status", itoa(id))
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "a person: review is the last stage of flow default, which has no terminal stage, so nothing moves it on "+
		"(`agenttree move 1 STAGE --reason TEXT`; give the flow a stage with `terminal: completion`)")
	assert.NotContains(t, res.stdout, "agent working")
	b := w.statusBlockOf(t, id)
	assert.Equal(t, statuscmd.WaiterPerson, b.Recommendation.For)
	assert.Equal(t, []string{"agenttree move 1 STAGE --reason TEXT"}, b.Recommendation.Run)
}
