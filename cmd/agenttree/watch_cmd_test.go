package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/outbox"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// syncBuffer is a buffer a test reads while a command writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// background runs the CLI against w's config until it ends or ctx is
// done; its exit status arrives on the channel.
func (w *workspace) background(ctx context.Context, env map[string]string, args ...string) (*syncBuffer, <-chan int) {
	out := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, w.dir, append([]string{"--config", w.config}, args...), getenvOf(env), strings.NewReader(""), out, out)
	}()
	return out, code
}

// awaitLine waits until out holds want.
func awaitLine(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	if !assert.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, settleWithin, 10*time.Millisecond) {
		require.FailNowf(t, "watch never said it", "want %q in:\n%s", want, out.String())
	}
}

// exited waits for the exit status of a background command.
func exited(t *testing.T, code <-chan int, out *syncBuffer) int {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(settleWithin):
		require.FailNowf(t, "watch did not stop", "it printed:\n%s", out.String())
	}
	return -1
}

func TestWatchFollowsAnIssueUntilItIsDone(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implementation_review")
	out, code := w.background(context.Background(), humanEnv, "watch", itoa(id), "--interval", "10ms", "--until-done")
	awaitLine(t, out, "issue 1 (Add login page) at implementation_review: waiting for human review")

	_, err := w.box(id).Put(context.Background(), outbox.Message{To: outbox.ToAgent, Kind: "person", Text: "look at the labels\nplease"})
	require.NoError(t, err)
	awaitLine(t, out, "message to the agent queued (person): look at the labels\n")

	r := w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Equal(t, exitOK, exited(t, code, out), out.String())
	assert.Contains(t, out.String(), "approve implementation_review → accepted: gates passed (by human)\n")
	assert.Equal(t, 3, strings.Count(out.String(), "\n"), "one line per change:\n%s", out.String())
}

// Watching while the real controller works: CI fails, the issue steps
// back and the agent is told; status says why the agent has it again.
func TestWatchFollowsTheController(t *testing.T) {
	r := newRig(t, "controller")
	id := r.startIssue(t)
	r.tmux.startAgent(t, agentSession(id))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, code := r.background(ctx, humanEnv, "watch", itoa(id), "--interval", "20ms")
	awaitLine(t, out, "issue 1 (Add checkout page) at pr_ready: controller: ")

	ctl := r.startController(t)
	awaitLine(t, out, "step_back pr_ready → implement.feedback: CI failed on ")
	awaitLine(t, out, "message to the agent delivered (step_back): issue 1 was stepped back pr_ready → implement.feedback")
	stopController(t, ctl)
	cancel()
	assert.Equal(t, exitOK, exited(t, code, out))

	res := r.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "agent working (developer) after a step back: CI failed on ")
}

func TestWatchStopsWhenTheIssueEscalates(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implementation_review")
	out, code := w.background(context.Background(), humanEnv, "watch", itoa(id), "--interval", "10ms", "--until-done")
	awaitLine(t, out, "at implementation_review")
	w.escalate(t, id)
	assert.Equal(t, exitOK, exited(t, code, out))
	assert.Contains(t, out.String(), "escalated (budget) at implementation_review: CI failed 5 times; a person resolves it: agenttree resume 1 | agenttree skip 1 --reason TEXT")
}

func TestWatchRunsUntilInterrupted(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Fix logout", "--stage", "accepted")
	ctx, cancel := context.WithCancel(context.Background())
	out, code := w.background(ctx, humanEnv, "watch", itoa(id), "--interval", "10ms")
	awaitLine(t, out, "issue 1 (Fix logout) at accepted: done")
	select {
	case c := <-code:
		require.FailNowf(t, "watch stopped by itself", "exit %d, without --until-done:\n%s", c, out.String())
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	assert.Equal(t, exitOK, exited(t, code, out), "Ctrl-C is how watching ends")
}

func TestWatchBadUsage(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Fix logout", "--stage", "accepted")
	for _, args := range [][]string{{"watch"}, {"watch", "1", "--interval", "0s"}, {"watch", "x"}} {
		r := w.run(t, humanEnv, args...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r.stdout)
		assert.NotEmpty(t, r.stderr)
	}
}

func TestWatchChanges(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	created := issues.HistoryEntry{To: "implement.feedback", Kind: issues.KindCreate, Actor: "human", At: at}
	back := issues.HistoryEntry{From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack, Actor: "controller",
		Reason: "CI failed on abc: test-unit", At: at.Add(time.Minute)}
	escalate := issues.HistoryEntry{From: "pr_ready", To: "pr_ready", Kind: stages.MoveEscalate, Actor: "controller", Reason: "budget spent", At: at}
	agent := waiting{who: waiterAgent, what: "agent working (developer)"}
	ci := waiting{who: waiterController, what: "controller: 1 of 2 checks still running on abc"}
	msg := outbox.Message{ID: "m1", To: outbox.ToAgent, Kind: "step_back", Text: "issue 1 was stepped back\nsee the log", State: outbox.Pending}
	sent := msg
	sent.State = outbox.Sent
	issue := func(stage string, h ...issues.HistoryEntry) *issues.Issue {
		return &issues.Issue{ID: 1, Title: "Checkout", Stage: stage, History: append([]issues.HistoryEntry{created}, h...)}
	}
	tests := []struct {
		name      string
		prev, cur sighting
		want      []string
	}{
		{
			name: "nothing changed",
			prev: sighting{iss: issue("pr_ready"), wait: ci},
			cur:  sighting{iss: issue("pr_ready"), wait: ci},
		},
		{
			name: "what it waits on",
			prev: sighting{iss: issue("pr_ready"), wait: waiting{what: "controller: not looked at yet"}},
			cur:  sighting{iss: issue("pr_ready"), wait: ci, poll: issues.Poll{Status: "1 of 2 checks still running on abc"}},
			want: []string{"waiting on: controller: 1 of 2 checks still running on abc"},
		},
		{
			name: "a poll status the waiting does not say",
			prev: sighting{iss: issue("implement.feedback"), wait: agent},
			cur:  sighting{iss: issue("implement.feedback"), wait: agent, poll: issues.Poll{Status: "no new review comments\nmore"}},
			want: []string{"controller: no new review comments"},
		},
		{
			name: "a step back, said once though the controller logged it too",
			prev: sighting{iss: issue("pr_ready"), wait: ci},
			cur: sighting{iss: issue("implement.feedback", back), wait: agent, poll: issues.Poll{Status: "stepped back", Actions: []issues.Action{
				{At: at, What: "new head abc"}, {At: at, What: "stepped back pr_ready → implement.feedback: CI failed on abc: test-unit"}}}},
			want: []string{"step_back pr_ready → implement.feedback: CI failed on abc: test-unit (by controller)", "controller: new head abc"},
		},
		{
			name: "only the actions logged since",
			prev: sighting{iss: issue("pr_ready"), wait: ci, poll: issues.Poll{Actions: []issues.Action{{At: at, What: "new head abc"}}}},
			cur: sighting{iss: issue("pr_ready"), wait: ci, poll: issues.Poll{Actions: []issues.Action{
				{At: at, What: "new head abc"}, {At: at.Add(time.Second), What: "forwarded 2 review comment(s)"}}}},
			want: []string{"controller: forwarded 2 review comment(s)"},
		},
		{
			name: "an escalation, from the issue's escalation",
			prev: sighting{iss: issue("pr_ready"), wait: ci},
			cur: sighting{iss: func() *issues.Issue {
				iss := issue("pr_ready", escalate)
				iss.Escalated = &issues.Escalation{Stage: "pr_ready", Kind: "budget", Reason: "budget spent"}
				return iss
			}(), wait: waiting{what: "escalated: budget spent"}, poll: issues.Poll{Actions: []issues.Action{{At: at, What: "escalated: budget spent"}}}},
			want: []string{"escalated (budget) at pr_ready: budget spent; a person resolves it: " + strings.Join(resolveCommands(1), " | ")},
		},
		{
			name: "a message queued, then delivered",
			prev: sighting{iss: issue("pr_ready"), wait: ci},
			cur:  sighting{iss: issue("pr_ready"), wait: ci, messages: []outbox.Message{msg}},
			want: []string{"message to the agent queued (step_back): issue 1 was stepped back"},
		},
		{
			name: "a message delivered",
			prev: sighting{iss: issue("pr_ready"), wait: ci, messages: []outbox.Message{msg}},
			cur:  sighting{iss: issue("pr_ready"), wait: ci, messages: []outbox.Message{sent}},
			want: []string{"message to the agent delivered (step_back): issue 1 was stepped back"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, changes(&tt.prev, &tt.cur))
		})
	}
}
