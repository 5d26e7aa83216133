package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// wakeWithin bounds how long after CI ends its step back may take to show
// in the agent's pane: far above the second it takes on a busy machine,
// far below the poll's ten minutes.
const wakeWithin = 20 * time.Second

// slowPoll is the controller pipeline with a CI poll of ten minutes: what
// reaches the pane within seconds was woken by the forge's watch.
func slowPoll(t *testing.T) string {
	t.Helper()
	config := testpipeline.Read(t, "controller")
	const fast = "ci_polling:\n  poll_interval_s: 1\n  min_interval_s: 1\n  max_interval_s: 2\n"
	require.Contains(t, config, fast, "testdata/pipelines/controller.yaml changed its ci_polling")
	return strings.Replace(config, fast, "ci_polling:\n  poll_interval_s: 600\n  min_interval_s: 600\n  max_interval_s: 600\n", 1)
}

// newRigConfig is newRig over config rather than a pipeline of testdata.
func newRigConfig(t *testing.T, config string) *rig {
	t.Helper()
	server := newTmuxServer(t)
	w := newForgeRepo(t, config+fmt.Sprintf("tmux:\n  socket: %s\n", strconv.Quote(server.socket)))
	store, err := issues.Open(filepath.Join(w.dir, "_agenttree"))
	require.NoError(t, err)
	logPath := filepath.Join(t.TempDir(), "controller.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("controller log:\n%s", data)
		}
	})
	return &rig{workspace: w, tmux: server, issues: store, log: log}
}

// TestCIRedReachesThePaneWithoutWaitingForThePoll: the controller runs as
// a process, the local forge's CI fails, and the step back's message is
// in the agent's pane within seconds, though the PR's next poll is ten
// minutes away: the end of the CI run woke the controller.
func TestCIRedReachesThePaneWithoutWaitingForThePoll(t *testing.T) {
	r := newRigConfig(t, slowPoll(t))
	ctl := r.startController(t)
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.tmux.startAgent(t, agentSession(id))
	r.checkoutAndCommit(t, id)
	r.agentNext(t, id)

	// The controller's first pass opens the PR and finds CI running (or
	// done already: then the change it was told waits for the next tick).
	var first *issues.Poll
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		w, err := r.issues.ReadWatch(id)
		require.NoError(c, err)
		require.NotNil(c, w.Poll, "the controller has not polled the PR yet")
		first = w.Poll
	}, settleWithin, lookEvery)
	polled := first.PolledAt
	require.Greater(t, first.NextAt.Sub(polled), 5*time.Minute, "the PR's next poll is minutes away: %+v", first)

	require.Eventually(t, func() bool {
		pane, err := r.tmux.captured(agentSession(id))
		return err == nil && strings.Contains(pane, "CI failed") && strings.Contains(pane, "run `agenttree next` when fixed")
	}, wakeWithin, lookEvery, "the step back's message shows in the agent's pane within %s of the first poll", wakeWithin)
	assert.Less(t, time.Since(polled), time.Minute, "long before the poll would have looked again")

	iss := r.issue(t, id)
	back := lastMove(t, &iss, stages.MoveStepBack)
	assert.Equal(t, []string{"pr_ready", "implement.feedback", "controller"}, []string{back.From, back.To, back.Actor})
	assert.Contains(t, back.Reason, "CI failed")
	stopController(t, ctl)
}
