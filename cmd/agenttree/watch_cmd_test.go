package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agenttree/agenttree/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// background runs the CLI against w's config until it ends or ctx is
// done; its exit status arrives on the channel.
func (w *workspace) background(ctx context.Context, env map[string]string, args ...string) (*syncbuf.Buffer, <-chan int) {
	out := &syncbuf.Buffer{}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, w.dir, append([]string{"--config", w.config}, args...), getenvOf(env), strings.NewReader(""), out, out)
	}()
	return out, code
}

// awaitLine waits until out holds want.
func awaitLine(t *testing.T, out *syncbuf.Buffer, want string) {
	t.Helper()
	if !assert.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, settleWithin, 10*time.Millisecond) {
		require.FailNowf(t, "watch never said it", "want %q in:\n%s", want, out.String())
	}
}

// exited waits for the exit status of a background command.
func exited(t *testing.T, code <-chan int, out *syncbuf.Buffer) int {
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

// watch --json prints each change as one JSON object on a line of its own
// (JSON Lines), as the README says every read command takes --json.
func TestWatchJSONLines(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implementation_review")
	out, code := w.background(context.Background(), humanEnv, "watch", itoa(id), "--interval", "10ms", "--until-done", "--json")
	awaitLine(t, out, `"kind":"state"`)

	_, err := w.box(id).Put(context.Background(), outbox.Message{To: outbox.ToAgent, Kind: "person", Text: "look at the labels\nplease"})
	require.NoError(t, err)
	awaitLine(t, out, `"kind":"message"`)
	r := w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Equal(t, exitOK, exited(t, code, out), out.String())

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3, "one line per change:\n%s", out.String())
	var events []statuscmd.WatchEvent
	for _, l := range lines {
		var ev statuscmd.WatchEvent
		require.NoError(t, json.Unmarshal([]byte(l), &ev), "each line is one JSON object: %q", l)
		assert.Equal(t, id, ev.Issue)
		assert.WithinDuration(t, time.Now(), ev.At, time.Minute)
		events = append(events, ev)
	}
	assert.Equal(t, []string{"state", "message", "move"}, []string{events[0].Kind, events[1].Kind, events[2].Kind})
	assert.Equal(t, "issue 1 (Add login page) at implementation_review: waiting for human review", events[0].Text)
	assert.Equal(t, statuscmd.WaiterPerson, events[0].WaitingFor)
	require.NotNil(t, events[1].Message)
	assert.Equal(t, "look at the labels\nplease", events[1].Message.Text)
	assert.Equal(t, outbox.ToAgent, events[1].Message.To)
	require.NotNil(t, events[2].Move)
	assert.Equal(t, "implementation_review", events[2].Move.From)
	assert.Equal(t, "accepted", events[2].Move.To)
	assert.Equal(t, "human", events[2].Move.Actor)
	assert.Equal(t, "accepted", events[2].Stage)
	assert.Equal(t, "done", events[2].WaitingOn)

	r = w.run(t, humanEnv, "watch", "--help")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "JSON Lines")
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
	assert.Contains(t, out.String(), "escalated (budget) at implementation_review: CI failed 5 times; a person resolves it: agenttree resume 1 --reason TEXT | agenttree skip 1 --reason TEXT")
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
