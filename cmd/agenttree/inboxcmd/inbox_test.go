package inboxcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// newIssue is a workspace over the cli pipeline, on a private tmux
// server, with issue 1 in it.
func newIssue(t *testing.T) (*cmdtest.Workspace, *engine.Engine) {
	t.Helper()
	w := cmdtest.NewWith(t, testpipeline.Read(t, "cli")+fmt.Sprintf("tmux: {socket: %q}\n", cmdtest.Tmux(t)))
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	_, err = e.Create(context.Background(), engine.NewIssue{Title: "Add login page"})
	require.NoError(t, err)
	w.Reset()
	return w, e
}

func TestNewCmdInbox(t *testing.T) {
	cmdtest.CheckFlags(t, []cmdtest.Flags{
		{Name: "defaults", Run: cmdtest.Flagged(newCmdInbox), Want: &InboxOptions{Recent: 10}},
		{Name: "an id", Run: cmdtest.Flagged(newCmdInbox, "3"), Want: &InboxOptions{IssueArg: "3", Recent: 10}},
		{Name: "-i", Run: cmdtest.Flagged(newCmdInbox, "-i", "4", "--recent", "2", "--json"), Want: &InboxOptions{IssueArg: "4", Recent: 2, JSON: true}},
		{Name: "two ids", Run: cmdtest.Flagged(newCmdInbox, "3", "4"), Err: "ID"},
	})
}

func TestInboxRun(t *testing.T) {
	tests := []struct {
		name string
		opts InboxOptions
		// put are the messages put in the box, the first delivered
		put []string
		// lines are in the output, in order
		lines []string
		err   string
	}{
		{name: "no messages", opts: InboxOptions{IssueArg: "1", Recent: 10}, lines: []string{"issue 1: no messages\n"}},
		{
			name: "one delivered, one not", opts: InboxOptions{IssueArg: "1", Recent: 10}, put: []string{"first", "second\nline \x1b[2J"},
			lines: []string{"issue 1: 1 undelivered, 1 delivered lately\n", "undelivered:\n", "  pending, to the agent, queued ", " [person]\n",
				"    second\n    line \n", "delivered:\n", "  sent ", ", to the agent [person]\n", "    first\n"},
		},
		{
			name: "none of the delivered asked for", opts: InboxOptions{IssueArg: "1"}, put: []string{"first", "second"},
			lines: []string{"issue 1: 1 undelivered, 0 delivered lately\n", "    second\n"},
		},
		{name: "the issue from AGENTTREE_ISSUE", opts: InboxOptions{Recent: 10}, lines: []string{"issue 1: no messages\n"}},
		{name: "no such issue", opts: InboxOptions{IssueArg: "9"}, err: "9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, e := newIssue(t)
			w.Env["AGENTTREE_ISSUE"] = "1"
			box := e.Outbox(1)
			for i, text := range tt.put {
				_, err := box.Put(context.Background(), outbox.Message{To: outbox.ToAgent, Kind: "person", Text: text})
				require.NoError(t, err)
				if i == 0 {
					_, err := box.Deliver(context.Background(), func(context.Context, outbox.Message) error { return nil }, nil)
					require.NoError(t, err)
				}
			}
			tt.opts.App = w.App
			err := inboxRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			out := w.Out.String()
			for _, l := range tt.lines {
				i := strings.Index(out, l)
				require.GreaterOrEqual(t, i, 0, "%q not in:\n%s", l, w.Out.String())
				out = out[i+len(l):]
			}
		})
	}
}

func TestInboxRunJSON(t *testing.T) {
	w, e := newIssue(t)
	_, err := e.Outbox(1).Put(context.Background(), outbox.Message{To: outbox.ToAgent, Text: "hello"})
	require.NoError(t, err)
	require.NoError(t, inboxRun(t.Context(), &InboxOptions{App: w.App, IssueArg: "1", Recent: 10, JSON: true}))
	var v View
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &v), w.Out.String())
	assert.Equal(t, 1, v.Issue)
	require.Len(t, v.Undelivered, 1)
	assert.Equal(t, "hello", v.Undelivered[0].Text)
	assert.Equal(t, []outbox.Message{}, v.Recent)
}

func TestNewCmdSend(t *testing.T) {
	var got *SendOptions
	require.NoError(t, cmdtest.Parse(newCmdSend(&cmdutil.App{}, func(_ context.Context, o *SendOptions) error { got = o; return nil }), "3", "the", "form", "--json"))
	got.App = nil
	assert.Equal(t, SendOptions{IssueArg: "3", Words: []string{"the", "form"}, JSON: true}, *got)
	require.ErrorContains(t, cmdtest.Parse(newCmdSend(&cmdutil.App{}, nil), "3"), "MESSAGE")
}

func TestSendRun(t *testing.T) {
	tests := []struct {
		name  string
		opts  SendOptions
		stdin string
		env   map[string]string
		// out is the output's start; text what was queued
		out, text string
		err       string
		code      int
	}{
		{
			name: "queued with no session", opts: SendOptions{IssueArg: "1", Words: []string{"the", "form"}},
			out: "queued (message ", text: "the form",
		},
		{name: "from standard input", opts: SendOptions{IssueArg: "1", Words: []string{"-"}}, stdin: "line one\nline two\n", out: "queued (message ", text: "line one\nline two\n"},
		{name: "empty", opts: SendOptions{IssueArg: "1", Words: []string{"-"}}, stdin: " \n", err: "the message is empty", code: 2},
		{name: "by an agent", opts: SendOptions{IssueArg: "1", Words: []string{"hi"}}, env: map[string]string{"AGENTTREE_ROLE": "developer"},
			err: "only a person sends messages by hand", code: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, e := newIssue(t)
			for k, v := range tt.env {
				w.Env[k] = v
			}
			w.App.In = strings.NewReader(tt.stdin)
			tt.opts.App = w.App
			err := sendRun(t.Context(), &tt.opts)
			pending, perr := e.Outbox(1).Pending()
			require.NoError(t, perr)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.Equal(t, tt.code, cmdutil.ExitCode(err))
				assert.Empty(t, pending, "nothing is queued")
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(w.Out.String(), tt.out), w.Out.String())
			assert.Contains(t, w.Out.String(), "no tmux session demo-developer-1 (the agent's) yet; `agenttree controller` delivers it when it can (see `agenttree inbox 1`)")
			require.Len(t, pending, 1)
			assert.Equal(t, tt.text, pending[0].Text)
		})
	}
}
