package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// An agent's issue show and inbox are answered with the issue and the
// messages, which the client prints with report.Printer, as a person's
// CLI does: the text is the same byte for byte, vars print as stored
// (not as the float64 JSON makes of a number), and --json is the issue
// or the messages, indented.
func TestShowAndInboxArePrintedAsAPersonsCLIPrintsThem(t *testing.T) {
	ctx := context.Background()
	e := agentsEngine(t, twoStages)
	iss, err := e.Create(ctx, engine.NewIssue{Title: "Add login page", Stage: "work", Labels: []string{"ui"},
		Vars: map[string]any{"budget": 1000000, "ratio": 0.5, "owner": "ana"}})
	require.NoError(t, err)
	box := e.Outbox(iss.ID)
	_, err = box.Put(ctx, outbox.Message{Kind: "review", Text: "delivered one"})
	require.NoError(t, err)
	_, err = box.Put(ctx, outbox.Message{Kind: "rebase", Text: "main moved on:\nrebase onto it"})
	require.NoError(t, err)
	_, err = box.Deliver(ctx, func(_ context.Context, m outbox.Message) error {
		if m.Kind != "review" {
			return os.ErrDeadlineExceeded // stays undelivered, with an attempt
		}
		return nil
	}, func(context.Context, outbox.Message) (string, bool, error) { return "", false, nil })
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "the rebase message waits")

	sessions := tokens.Open(e.Store.Root())
	token, err := sessions.Mint(iss.ID, "developer")
	require.NoError(t, err)
	agents := api.Agents{Engine: func() (*engine.Engine, error) { return e, nil }}
	socket := serve(t, &api.Server{Sessions: sessions, Owner: os.Getuid(),
		Handlers: api.Handlers{Show: agents.Show, Inbox: agents.Inbox}})
	agent, person := api.NewClient(socket, token), api.NewClient(socket, "")

	stored, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	var shown bytes.Buffer
	report.Printer{Out: &shown, ErrOut: &shown}.Issue(report.Show(e, stored))
	require.Contains(t, shown.String(), "  vars:    budget=1000000 owner=ana ratio=0.5\n")
	storedJSON, err := json.MarshalIndent(stored, "", "  ")
	require.NoError(t, err)
	v, err := report.ReadInbox(box, iss.ID, 10)
	require.NoError(t, err)
	require.Len(t, v.Undelivered, 1)
	require.Len(t, v.Recent, 1)
	inboxJSON, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)

	for _, tt := range []struct {
		name   string
		client *api.Client
		route  string
		req    any
		want   string
	}{
		{"show, the session's issue", agent, api.RouteShow, api.ShowRequest{}, shown.String()},
		{"show, named by a person", person, api.RouteShow, api.ShowRequest{Issue: iss.ID}, shown.String()},
		{"show --json", agent, api.RouteShow, api.ShowRequest{JSON: true}, string(storedJSON) + "\n"},
		{"inbox --json", agent, api.RouteInbox, api.InboxRequest{Recent: 10, JSON: true}, string(inboxJSON) + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.client.Do(ctx, tt.route, tt.req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, out.Text)
			assert.Equal(t, 0, out.ExitCode)
		})
	}

	t.Run("inbox", func(t *testing.T) {
		out, err := agent.Do(ctx, api.RouteInbox, api.InboxRequest{Recent: 10})
		require.NoError(t, err)
		// The ages are the client's, as of when it printed: the same
		// printer, as of a moment later, is byte for byte the same.
		var want bytes.Buffer
		report.Printer{Out: &want}.Inbox(v, time.Now())
		assert.Equal(t, want.String(), out.Text)
		assert.Contains(t, out.Text, "issue 1: 1 undelivered, 1 delivered lately\n")
		assert.Contains(t, out.Text, "    main moved on:\n    rebase onto it\n")
	})

	t.Run("a person's inbox names no issue", func(t *testing.T) {
		_, err := person.Do(ctx, api.RouteInbox, api.InboxRequest{})
		var refused *api.Error
		require.ErrorAs(t, err, &refused)
		assert.Contains(t, refused.Message, "an inbox is an issue's")
		assert.Equal(t, 1, refused.ExitCode)
	})
}
