package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/stages"
)

// The end-to-end tests of the host controller: real git with a bare
// origin, the local forge running CI (`test -f ok.txt`), a real tmux server
// on a private socket, and `agenttree controller` as a process of its own.
// Agents and people act through the CLI, as they do.

// TestControllerReferencePath runs the reference path with a long-running
// controller, for each way of declaring where a failing wait_for_ci goes:
// implement.feedback → pr_ready → CI fails → stepped back, the agent told
// in its pane → fix, next → CI passes → implementation_review → approve →
// merged → accepted.
func TestControllerReferencePath(t *testing.T) {
	tests := []struct {
		name     string
		pipeline string
	}{
		{"hook on_failure", "controller"},
		{"stage on_failure only", "controller-stage-on-failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.pipeline)
			ctl := r.startController(t)
			id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
			received := r.tmux.startAgent(t, agentSession(id))
			r.checkoutAndCommit(t, id)
			r.agentNext(t, id)

			// CI fails: ok.txt is missing.
			iss := r.waitFor(t, id, "stepped back once", steppedBack(1))
			back := lastMove(t, iss, stages.MoveStepBack)
			assert.Equal(t, issues.HistoryEntry{From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack, Actor: "controller", Reason: back.Reason, At: back.At}, back)
			assert.Contains(t, back.Reason, "CI failed")
			assert.Equal(t, 1, iss.PRNumber, "the controller opened the PR")

			msg := r.awaitStepBackSent(t, id)
			got := awaitReceived(t, received, typed(msg))
			assert.Equal(t, 1, strings.Count(got, outbox.Marker(msg)), "delivered once: %q", got)
			pane := r.tmux.capture(t, agentSession(id))
			feedback := filepath.Join(r.issueDir(id), "ci_feedback.md")
			for _, want := range []string{outbox.Marker(msg), back.Reason, feedback, "run `agenttree next` when fixed"} {
				assert.Contains(t, pane, want, "the agent's pane shows the failure, where to read about it and what to do")
			}
			assert.FileExists(t, feedback)
			assert.True(t, strings.HasSuffix(strings.TrimRight(msg.Text, ". \n"), "run `agenttree next` when fixed"),
				"the message ends with what to do: %q", msg.Text)

			r.fixCI(t, id)
			iss = r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
			assert.Equal(t, 1, moves(iss, stages.MoveStepBack), "CI passed on the new head")
			passed := iss.History[len(iss.History)-1]
			assert.Equal(t, []string{"pr_ready", "implementation_review", "controller"}, []string{passed.From, passed.To, passed.Actor})

			r.approve(t, id)
			stopController(t, ctl)
			assert.Equal(t, 1, r.prs(t), "one PR")
			assert.Len(t, r.agentMessages(t, id), 1, "the agent was told once, of the step back")
		})
	}
}

// TestControllerPassRunsInAPersonsNext: with no controller running, a
// person's `next` at pr_ready runs the controller's pass in the foreground
// and reports where the issue ends up.
func TestControllerPassRunsInAPersonsNext(t *testing.T) {
	r := newRig(t, "controller")
	id := r.startIssue(t)

	res := r.runProcess(t, processEnv(), "next", "-i", itoa(id), "--json")
	require.Equal(t, exitBlocked, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	var got engine.Result
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got), res.stdout)
	assert.Equal(t, engine.StatusSteppedBack, got.Status)
	assert.Equal(t, []string{"pr_ready", "implement.feedback"}, []string{got.From, got.To})
	require.NotNil(t, got.StepBack, res.stdout)
	feedback := filepath.Join(r.issueDir(id), "ci_feedback.md")
	assert.Equal(t, "implement.feedback", got.StepBack.To)
	assert.Contains(t, got.StepBack.Reason, "CI failed")
	assert.Equal(t, feedback, got.StepBack.Feedback)
	assert.FileExists(t, feedback)
	assert.Contains(t, res.stderr, "running its pass", "a progress line while it waits for CI")
	assert.Equal(t, "implement.feedback", r.issue(t, id).Stage)

	// Nobody runs the agent's session: the message waits for it.
	pending, err := r.outbox(id).Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, string(stages.MoveStepBack), pending[0].Kind)

	r.fixCI(t, id)
	res = r.runProcess(t, processEnv(), "next", "-i", itoa(id), "--json")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	got = engine.Result{}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got), res.stdout)
	assert.Equal(t, engine.StatusAdvanced, got.Status)
	assert.Equal(t, []string{"pr_ready", "implementation_review"}, []string{got.From, got.To})
	assert.Equal(t, "implementation_review", r.issue(t, id).Stage)
}

// TestControllerLateSession: the agent's session does not exist yet when
// the issue is stepped back; the message waits in the outbox, where
// anyone can see it, and is delivered once the session is there.
func TestControllerLateSession(t *testing.T) {
	r := newRig(t, "controller")
	ctl := r.startController(t)
	id := r.startIssue(t)
	r.waitFor(t, id, "stepped back once", steppedBack(1))

	var waiting []outbox.Message
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pending, err := r.outbox(id).Pending()
		require.NoError(c, err)
		require.Len(c, pending, 1, "the step back's message is queued")
		require.Positive(c, pending[0].Attempts, "the controller tried to deliver it")
		// Not caught mid-attempt: between attempts it waits, pending.
		require.Equal(c, outbox.Pending, pending[0].State)
		waiting = pending
	}, settleWithin, lookEvery)
	assert.Equal(t, string(stages.MoveStepBack), waiting[0].Kind)
	assert.Contains(t, waiting[0].LastError, agentSession(id), "the outbox says what it waits for")
	assert.FileExists(t, filepath.Join(r.outbox(id).Dir(), waiting[0].ID+".json"), "the queued message is a file in the issue's outbox/")
	inbox := r.run(t, agentEnv, "inbox", itoa(id))
	require.Equal(t, exitOK, inbox.code, "stdout %s stderr %s", inbox.stdout, inbox.stderr)
	assert.Contains(t, inbox.stdout, lines.First(waiting[0].Text), "`agenttree inbox` shows the message waiting")

	received := r.tmux.startAgent(t, agentSession(id))
	msg := r.awaitStepBackSent(t, id)
	assert.Equal(t, waiting[0].ID, msg.ID)
	got := awaitReceived(t, received, typed(msg))
	assert.Equal(t, 1, strings.Count(got, outbox.Marker(msg)), "delivered once: %q", got)
	pending, err := r.outbox(id).Pending()
	require.NoError(t, err)
	assert.Empty(t, pending)
	stopController(t, ctl)
}

// TestControllerBudgetEscalates: CI that always fails, with a budget of
// two step backs at pr_ready. The third failure escalates the issue; the
// controller leaves it alone, and an agent cannot move it.
func TestControllerBudgetEscalates(t *testing.T) {
	r := newRig(t, "controller-budget")
	ctl := r.startController(t)
	id := r.startIssue(t)
	for n := 1; n <= 2; n++ {
		r.waitFor(t, id, "stepped back "+strconv.Itoa(n)+" times", steppedBack(n))
		gittest.Commit(t, r.dir, "checkout.txt", "checkout, try "+strconv.Itoa(n)+"\n", "another try")
		r.agentNext(t, id)
	}
	iss := r.waitFor(t, id, "escalated", func(iss *issues.Issue) bool { return iss.Escalated != nil })
	stopController(t, ctl)

	assert.Equal(t, "pr_ready", iss.Stage)
	assert.Equal(t, "pr_ready", iss.Escalated.Stage)
	assert.Equal(t, issues.EscalatedBudget, iss.Escalated.Kind)
	assert.Equal(t, 2, iss.Attempts["ci_failed"], "two step backs were the budget; the third failure found it spent and is no step back")
	last := iss.History[len(iss.History)-1]
	assert.Equal(t, []string{"escalate", "controller"}, []string{string(last.Kind), last.Actor})
	assert.Equal(t, 2, moves(iss, stages.MoveStepBack))
	show := r.run(t, humanEnv, "issue", "show", itoa(id))
	assert.Contains(t, show.stdout, "escalate")

	// The controller leaves it alone: a pass changes nothing, runs no CI.
	runs := r.ciRuns(t)
	res := r.runProcess(t, processEnv(), "controller", "--once", "--issue", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	after := r.issue(t, id)
	assert.Equal(t, iss.Version, after.Version, "history %+v", after.History)
	assert.Equal(t, runs, r.ciRuns(t), "no CI run for an escalated issue")
	// People are told, by the pass that escalated or this one at the
	// latest (no manager session is configured: the log is where), even
	// though the agent's session is gone and its messages wait for it.
	box, err := r.outbox(id).Recent(0)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(box, func(m outbox.Message) bool {
		return m.To == outbox.ToManager && m.Kind == "escalation" && m.State == outbox.Sent
	}), "the escalation reached people; the outbox holds %+v", box)

	status := r.run(t, humanEnv, "status")
	assert.Equal(t, exitOK, status.code, "stdout %s stderr %s", status.stdout, status.stderr)
	for _, want := range []string{iss.Escalated.Reason, "agenttree resume " + itoa(id)} {
		assert.Contains(t, status.stdout, want, "status says why the issue stopped and how to resolve it")
	}
	next := r.run(t, agentEnv, "next")
	assert.Equal(t, exitWaiting, next.code, "stdout %s stderr %s", next.stdout, next.stderr)
	assert.Contains(t, next.stdout+next.stderr, "agenttree resume")
	assert.Equal(t, iss.Version, r.issue(t, id).Version)
}

// TestControllerSecondInstanceExits: one controller per repository; a
// second says which process holds it and exits 2.
func TestControllerSecondInstanceExits(t *testing.T) {
	r := newRig(t, "controller")
	first := r.startController(t)
	pid := strconv.Itoa(first.Process.Pid)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		log, err := os.ReadFile(r.log.Name())
		require.NoError(c, err)
		require.Regexp(c, `msg="controller started" .*pid=`+pid+`\b`, string(log), "the first controller holds the lock")
	}, settleWithin, lookEvery)

	for _, args := range [][]string{{"controller"}, {"controller", "--once"}} {
		res := r.runProcess(t, processEnv(), args...)
		assert.Equal(t, exitUsage, res.code, "%v: stdout %s stderr %s", args, res.stdout, res.stderr)
		assert.Contains(t, res.stderr, pid, "%v names the pid of the first", args)
	}
	stopController(t, first)
	res := r.runProcess(t, processEnv(), "controller", "--once")
	assert.Equal(t, exitOK, res.code, "the lock is free once the first stopped: stdout %s stderr %s", res.stdout, res.stderr)
}
