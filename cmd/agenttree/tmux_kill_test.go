package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

// keptAgent stands in for an agent that agenttree starts (`agenttree
// start`, the controller's keep-alive: docs/ARCHITECTURE.md §9): each
// start notes its process id, then appends every line typed into its
// pane to a file of that start's own, so that what each agent process
// read is told apart from what the one before it read.
const keptAgent = `#!/bin/sh
echo $$ >> "$0.starts"
exec cat >> "$0.received-$$"
`

// keptAgents is the config of the agents the controller keeps alive.
const keptAgents = `agents:
  worker: {command: %q}
roles:
  developer: {agents: [worker]}
`

// agentRig is the controller's rig whose developer agent is started and
// kept alive by agenttree, in a worktree of its own.
type agentRig struct {
	*rig
	agent string
	// work is the agent's worktree, where it commits and runs `next`.
	work *workspace
}

// newAgentRig makes the rig of the reference pipeline with issue id at
// implement.feedback and its agent started by a person (`agenttree
// start`), the start's message read.
func newAgentRig(t *testing.T) (*agentRig, int) {
	t.Helper()
	agent := filepath.Join(t.TempDir(), "agent")
	require.NoError(t, os.WriteFile(agent, []byte(keptAgent), 0o755))
	r := newRigWith(t, "controller", "", fmt.Sprintf(keptAgents, agent))
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	res := r.run(t, humanEnv, "start", itoa(id), "--json")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	var started struct {
		Session struct{ Worktree string } `json:"session"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &started), res.stdout)
	a := &agentRig{rig: r, agent: agent, work: &workspace{dir: started.Session.Worktree, config: r.config}}
	a.awaitStarts(t, 1)
	return a, id
}

// commitAndNext is the agent's work in its worktree: a commit, then
// `next`, which moves the issue to pr_ready, where the controller's CI
// fails it (no ok.txt) and steps it back with a message for the agent.
func (a *agentRig) commitAndNext(t *testing.T, id int) {
	t.Helper()
	gittest.Commit(t, a.work.dir, "checkout.txt", "checkout\n", "checkout page")
	res := a.work.run(t, agentEnv, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Equal(t, "pr_ready", a.issue(t, id).Stage)
}

// starts are the process ids of the agent's starts, in order.
func (a *agentRig) starts() []string {
	data, _ := os.ReadFile(a.agent + ".starts")
	return strings.Fields(string(data))
}

// awaitStarts waits until the agent was started n times, and returns the
// starts.
func (a *agentRig) awaitStarts(t *testing.T, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(a.starts()) >= n }, settleWithin, lookEvery, "the agent started %d times", n)
	return a.starts()
}

// received is the file of what the agent started as process pid read.
func (a *agentRig) received(pid string) string { return a.agent + ".received-" + pid }

// pauseTyped waits until issue id's step back is typed into the agent's
// pane and not yet submitted (the outbox records it Typed after the paste,
// before Enter: docs/ARCHITECTURE.md §6, `controller/delivery`), and
// stops ctl there, returning the message. Enter follows the paste by at
// least 150 ms, less than a loaded machine can keep a test waiting, so
// the test holds the moment: SIGSTOP, for as long as it needs (the
// controller goes on at SIGCONT), or SIGKILL when kill. Should the
// test come too late all the same, the message is sent by then, and
// checkDeliveredOnce checks what holds in that case.
func (a *agentRig) pauseTyped(t *testing.T, ctl *exec.Cmd, id int, kill bool) outbox.Message {
	t.Helper()
	sig := syscall.SIGSTOP
	if kill {
		sig = syscall.SIGKILL
	}
	var typed outbox.Message
	var stopErr error
	require.Eventually(t, func() bool {
		box, err := a.outbox(id).Recent(0)
		if err != nil {
			return false
		}
		i := slices.IndexFunc(box, func(m outbox.Message) bool {
			return m.Kind == string(stages.MoveStepBack) && (m.State == outbox.Typed || m.State == outbox.Sent)
		})
		if i < 0 {
			return false
		}
		stopErr, typed = ctl.Process.Signal(sig), box[i]
		return true
	}, settleWithin, time.Millisecond, "the step back typed into the agent's pane")
	require.NoError(t, stopErr)
	t.Logf("the controller stopped (%s) with the step back %s", sig, typed.State)
	if kill {
		_ = ctl.Wait()
	}
	return typed
}

// killTmux kills the tmux server: every session goes, and every agent
// process with it.
func (a *agentRig) killTmux(t *testing.T) {
	t.Helper()
	a.tmux.run(t, "kill-server")
}

// checkDeliveredOnce checks that msg, typed into the agent's pane when
// its tmux server was killed, reached the agent running now whole and
// once, unless the pane the kill ended had confirmed it before: what
// holds, whichever the kill met.
func (a *agentRig) checkDeliveredOnce(t *testing.T, id int, msg outbox.Message) {
	t.Helper()
	sent := a.awaitStepBackSent(t, id)
	require.Equal(t, msg.ID, sent.ID)
	starts := a.starts()
	require.Len(t, starts, 2, "the agent started once, and once again after the kill")
	_, err := a.tmux.output("has-session", "-t", "="+agentSession(id))
	require.NoError(t, err, "the agent's session is back")
	before, _ := os.ReadFile(a.received(starts[0]))
	t.Logf("the agent killed with tmux had read %q; the message as sent: attempts %d, last error %q", before, sent.Attempts, sent.LastError)
	assert.LessOrEqual(t, strings.Count(string(before), outbox.Marker(msg)), 1, "typed into the first agent at most once: %q", before)

	if sent.Attempts == 1 && sent.LastError == "" {
		// Its first delivery was confirmed: the first agent's pane took
		// Enter before the kill (the stop came late), and its program
		// read it whole, or was killed as it did. A message an agent's
		// pane confirmed is delivered: it is not typed again into the
		// agent started next, whatever became of the one that took it.
		// The restart's message, put after it, is read after it would be.
		var after string
		require.Eventually(t, func() bool {
			data, _ := os.ReadFile(a.received(starts[1]))
			after = string(data)
			return strings.Contains(after, "You were restarted")
		}, settleWithin, lookEvery, "the agent started again is told why")
		assert.NotContains(t, after, outbox.Marker(msg), "not typed again")
		return
	}
	// Never confirmed: whatever the first agent had read died with it,
	// and the message goes to the agent running now, whole and once.
	after := awaitReceived(t, a.received(starts[1]), typed(msg))
	assert.Equal(t, 1, strings.Count(after, outbox.Marker(msg)), "delivered once to the agent started again: %q", after)
	assert.Equal(t, 1, strings.Count(after, msg.Text), "whole, once: %q", after)
}

// checkNothingLeft checks that issue id's outbox holds nothing
// undelivered.
func (a *agentRig) checkNothingLeft(t *testing.T, id int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pending, err := a.outbox(id).Pending()
		require.NoError(c, err)
		assert.Empty(c, pending, "nothing left undelivered")
	}, settleWithin, lookEvery)
}

// TestTmuxServerKilledMidDelivery kills the tmux server while the
// controller is typing a message into the agent's pane: pasted, not yet
// submitted. The controller goes on; its keep-alive starts the agent
// again (docs/ARCHITECTURE.md §9), and the message, whose delivery was
// never confirmed, reaches the new agent whole and once.
func TestTmuxServerKilledMidDelivery(t *testing.T) {
	a, id := newAgentRig(t)
	a.commitAndNext(t, id)
	ctl := a.startController(t)
	msg := a.pauseTyped(t, ctl, id, false)
	a.killTmux(t)
	require.NoError(t, ctl.Process.Signal(syscall.SIGCONT))

	a.awaitStarts(t, 2)
	a.waitFor(t, id, "stepped back once", steppedBack(1))
	a.checkDeliveredOnce(t, id, msg)
	a.checkNothingLeft(t, id)
	require.Nil(t, ctl.ProcessState, "the controller still runs")
	stopController(t, ctl)
}

// TestMachineRebootedMidDelivery is a reboot in the middle of a
// delivery: the controller SIGKILLed after the paste, before Enter, the
// tmux server and every agent gone with it, and meanwhile a person's
// message queued for an agent that is not there. The controller started
// as after a boot recreates the session and delivers both messages, in
// order, each whole and once; the state verifies.
func TestMachineRebootedMidDelivery(t *testing.T) {
	a, id := newAgentRig(t)
	a.commitAndNext(t, id)
	msg := a.pauseTyped(t, a.startController(t), id, true)
	a.killTmux(t)
	res := a.run(t, humanEnv, "send", itoa(id), "the", "form", "needs", "labels")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	require.Contains(t, res.stdout, "queued", "no agent to deliver it to")

	ctl := a.startController(t)
	a.awaitStarts(t, 2)
	a.checkDeliveredOnce(t, id, msg)
	a.checkNothingLeft(t, id)
	var person outbox.Message
	for _, m := range a.agentMessages(t, id) {
		if m.Kind != string(stages.MoveStepBack) && m.Text == "the form needs labels" {
			person = m
		}
	}
	require.NotEmpty(t, person.ID, "the person's message is in the outbox")
	after := awaitReceived(t, a.received(a.starts()[1]), typed(person))
	assert.Equal(t, 1, strings.Count(after, outbox.Marker(person)), "the person's message delivered once: %q", after)
	if i := strings.Index(after, outbox.Marker(msg)); i >= 0 {
		assert.Less(t, i, strings.Index(after, outbox.Marker(person)), "in the order they were put: %q", after)
	}
	stopController(t, ctl)

	res = a.run(t, humanEnv, "verify", "--json")
	require.Equal(t, exitOK, res.code, "verify: stdout %s stderr %s", res.stdout, res.stderr)
	var v verifyOut
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &v), res.stdout)
	assert.True(t, v.OK, res.stdout)
	require.Len(t, v.Issues, 1, res.stdout)
	assert.True(t, v.Issues[0].OK, "issue %d: %v", id, v.Issues[0].Problems)
}
