package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/inboxcmd"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func (w *workspace) box(id int) *outbox.Box { return outbox.Open(w.hostDir(id) + "/outbox") }

// put queues messages in issue id's outbox.
func (w *workspace) put(t *testing.T, id int, msgs ...outbox.Message) []outbox.Message {
	t.Helper()
	out := make([]outbox.Message, len(msgs))
	for i, m := range msgs {
		var err error
		out[i], err = w.box(id).Put(context.Background(), m)
		require.NoError(t, err)
	}
	return out
}

// messages is every message of issue id's outbox, oldest first.
func (w *workspace) messages(t *testing.T, id int) []outbox.Message {
	t.Helper()
	msgs, err := w.box(id).Recent(0)
	require.NoError(t, err)
	return msgs
}

// withTmux is the cli pipeline with agents' sessions on server.
func withTmux(t *testing.T, server *tmuxServer) *workspace {
	t.Helper()
	return newWorkspace(t, testpipeline.Read(t, "cli")+fmt.Sprintf("tmux:\n  socket: %s\n", strconv.Quote(server.socket)))
}

// demoAgent is the session of issue id's developer in the cli pipeline.
func demoAgent(id int) string { return fmt.Sprintf("demo-developer-%d", id) }

func TestInboxShowsUndeliveredAndRecentMessages(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implement.code")
	w.put(t, id,
		outbox.Message{Kind: "step_back", Text: "CI failed: test-unit"},
		outbox.Message{Kind: "review", Text: "rename the form\nand add labels"})
	// The first is delivered; the second's session is not there.
	_, err := w.box(id).Deliver(context.Background(), func(_ context.Context, m outbox.Message) error {
		if m.Kind == "review" {
			return errors.New(`no tmux session "demo-developer-1"`)
		}
		return nil
	}, nil)
	require.Error(t, err)
	before := w.messages(t, id)

	r := w.run(t, humanEnv, "inbox", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, re := range []string{
		`(?m)^issue 1: 1 undelivered, 1 delivered lately$`,
		`(?m)^undelivered:\n  pending, to the agent, queued \d+s ago; 1 attempt\(s\), last: no tmux session "demo-developer-1" \[review\]\n    rename the form\n    and add labels$`,
		`(?m)^delivered:\n  sent \S+ \S+, to the agent \[step_back\]\n    CI failed: test-unit$`,
	} {
		assert.Regexp(t, re, r.stdout)
	}

	// An agent pulls them, naming the issue by AGENTTREE_ISSUE.
	r = w.run(t, map[string]string{"AGENTTREE_ROLE": "developer", "AGENTTREE_ISSUE": "1"}, "inbox", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var v inboxcmd.View
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), r.stdout)
	assert.Equal(t, 1, v.Issue)
	require.Len(t, v.Undelivered, 1)
	assert.Equal(t, "rename the form\nand add labels", v.Undelivered[0].Text)
	assert.Equal(t, 1, v.Undelivered[0].Attempts)
	require.Len(t, v.Recent, 1)
	assert.Equal(t, outbox.Sent, v.Recent[0].State)

	r = w.run(t, humanEnv, "inbox", itoa(id), "--recent", "0", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.JSONEq(t, `[]`, string(decodeObject(t, r.stdout)["recent"]))

	assert.Equal(t, before, w.messages(t, id), "reading the inbox changes nothing")
}

func TestInboxOfAnIssueWithoutMessages(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implement.code")
	r := w.run(t, humanEnv, "inbox", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "issue 1: no messages\n", r.stdout)
	r = w.run(t, humanEnv, "inbox", itoa(id), "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"issue": 1, "undelivered": [], "recent": []}`, r.stdout)

	r = w.run(t, agentEnv, "inbox", "-i", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "issue 1: no messages\n", r.stdout)

	r = w.run(t, humanEnv, "inbox", "7")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "issue 7")
	r = w.run(t, agentEnv, "inbox")
	assert.Equal(t, exitUsage, r.code, "no id, no AGENTTREE_ISSUE, no git branch")
	assert.Contains(t, r.stderr, "which issue?")
}

func TestSendIsForPeople(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implement.code")
	for _, env := range []map[string]string{agentEnv, containerEnv, controlEnv} {
		r := w.run(t, env, "send", itoa(id), "hello")
		assert.Equal(t, exitWaiting, r.code, "%v: %s", env, r.stdout)
		assert.Contains(t, r.stderr, "only a person sends messages by hand")
	}
	assert.Empty(t, w.messages(t, id), "nothing was queued")

	for _, args := range [][]string{{"send", itoa(id)}, {"send", itoa(id), "  "}, {"send", "x", "hello"}} {
		r := w.run(t, humanEnv, args...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r.stdout)
	}
	assert.Empty(t, w.messages(t, id))
}

func TestSendQueuesWhatCannotBeDeliveredYet(t *testing.T) {
	server := newTmuxServer(t)
	w := withTmux(t, server)
	id := w.create(t, "Add login page", "--stage", "implement.code")

	r := w.run(t, humanEnv, "send", itoa(id), "the", "form", "needs", "labels")
	require.Equal(t, exitOK, r.code, "queued is not a failure: %s", r.stderr)
	assert.Regexp(t, `^queued \(message \S+\): no tmux session demo-developer-1 \(the agent's\) yet; `+
		"`agenttree controller` delivers it when it can \\(see `agenttree inbox 1`\\)\n$", r.stdout)
	msgs := w.messages(t, id)
	require.Len(t, msgs, 1)
	assert.Equal(t, "the form needs labels", msgs[0].Text)
	assert.Equal(t, outbox.ToAgent, msgs[0].To)
	assert.Equal(t, outbox.Pending, msgs[0].State)

	// Once the session is there, the next send delivers both, in order.
	received := server.startAgent(t, demoAgent(id))
	r = w.run(t, humanEnv, "send", itoa(id), "--json", "and a submit button")
	require.Equal(t, exitOK, r.code, r.stderr)
	var res inboxcmd.SendResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	msgs = w.messages(t, id)
	require.Len(t, msgs, 2)
	assert.Equal(t, inboxcmd.SendResult{Issue: id, ID: msgs[1].ID, State: inboxcmd.SendDelivered, Session: demoAgent(id)}, res)
	for _, m := range msgs {
		assert.Equal(t, outbox.Sent, m.State, m.Text)
	}
	got := awaitReceived(t, received, typed(msgs[1])+"\n")
	assert.Equal(t, typed(msgs[0])+"\n"+typed(msgs[1])+"\n", got, "each once, in order")
}

func TestSendDeliversAMessageFromStandardInput(t *testing.T) {
	server := newTmuxServer(t)
	w := withTmux(t, server)
	id := w.create(t, "Add login page", "--stage", "implement.code")
	received := server.startAgent(t, demoAgent(id))

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), w.dir, []string{"--config", w.config, "send", itoa(id), "-"}, getenvOf(humanEnv), strings.NewReader("line one\nline two\n"), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "delivered to tmux session demo-developer-1")
	msgs := w.messages(t, id)
	require.Len(t, msgs, 1)
	assert.Equal(t, "line one\nline two\n", msgs[0].Text)
	awaitReceived(t, received, outbox.Marker(msgs[0])+" line one\nline two\n")
}

// A message to people ahead in the queue is the controller's to deliver:
// send leaves the queue, and that message's attempts, as they are.
// send delivers the queue as the controller would, in order: a message
// to people ahead of the person's own goes where people are told first.
func TestSendDeliversTheQueueInOrder(t *testing.T) {
	server := newTmuxServer(t)
	w := withTmux(t, server)
	id := w.create(t, "Add login page", "--stage", "implement.code")
	server.startAgent(t, demoAgent(id))
	w.put(t, id, outbox.Message{To: outbox.ToManager, Kind: "escalation", Text: "issue 1 needs a person"})

	r := w.run(t, humanEnv, "send", itoa(id), "hello")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "delivered")
	msgs := w.messages(t, id)
	require.Len(t, msgs, 2)
	assert.Equal(t, outbox.Sent, msgs[0].State)
	assert.Equal(t, outbox.Sent, msgs[1].State)
	assert.False(t, msgs[1].SentAt.Before(msgs[0].SentAt), "in order")
}

func getenvOf(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}
