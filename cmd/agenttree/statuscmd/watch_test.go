package statuscmd

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/sessions/waiton"
	"github.com/agenttree/agenttree/stages"
)

func TestWatchChanges(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	created := issues.HistoryEntry{To: "implement.feedback", Kind: issues.KindCreate, Actor: "human", At: at}
	back := issues.HistoryEntry{From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack, Actor: "controller",
		Reason: "CI failed on abc: test-unit", At: at.Add(time.Minute)}
	escalate := issues.HistoryEntry{From: "pr_ready", To: "pr_ready", Kind: stages.MoveEscalate, Actor: "controller", Reason: "budget spent", At: at}
	agent := waiton.Waiting{Who: WaiterAgent, What: "agent working (developer)"}
	ci := waiton.Waiting{Who: WaiterController, What: "controller: 1 of 2 checks still running on abc"}
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
			prev: sighting{iss: issue("pr_ready"), wait: waiton.Waiting{What: "controller: not looked at yet"}},
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
			}(), wait: waiton.Waiting{What: "escalated: budget spent"}, poll: issues.Poll{Actions: []issues.Action{{At: at, What: "escalated: budget spent"}}}},
			want: []string{"escalated (budget) at pr_ready: budget spent; a person resolves it: " + strings.Join(ResolveCommands(1), " | ")},
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
			var got []string
			for _, c := range changes(&tt.prev, &tt.cur) {
				got = append(got, c.text)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// Each change has its kind, and a move or a message the entry it is
// about: what `watch --json` prints.
func TestWatchChangeKinds(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	created := issues.HistoryEntry{To: "implementation_review", Kind: issues.KindCreate, Actor: "human", At: at}
	approved := issues.HistoryEntry{From: "implementation_review", To: "accepted", Kind: stages.MoveApprove, Actor: "human", Reason: "gates passed", At: at}
	review := waiton.Waiting{Who: WaiterPerson, What: "waiting for human review"}
	done := waiton.Waiting{Who: WaiterNobody, What: "done"}
	msg := outbox.Message{ID: "m1", To: outbox.ToAgent, Kind: "person", Text: "look at the labels", State: outbox.Pending}
	prev := &sighting{iss: &issues.Issue{ID: 4, Title: "Checkout", Stage: "implementation_review", History: []issues.HistoryEntry{created}}, wait: review}
	cur := &sighting{iss: &issues.Issue{ID: 4, Title: "Checkout", Stage: "accepted", History: []issues.HistoryEntry{created, approved}}, wait: done,
		messages: []outbox.Message{msg}}

	first := changes(nil, prev)
	require.Len(t, first, 1)
	assert.Equal(t, WatchEvent{At: at, Issue: 4, Kind: "state", Text: "issue 4 (Checkout) at implementation_review: waiting for human review",
		Stage: "implementation_review", WaitingOn: "waiting for human review", WaitingFor: WaiterPerson}, first[0].event(at, prev))

	got := changes(prev, cur)
	require.Len(t, got, 2)
	assert.Equal(t, WatchEvent{At: at, Issue: 4, Kind: "move", Text: "approve implementation_review → accepted: gates passed (by human)",
		Stage: "accepted", WaitingOn: "done", WaitingFor: WaiterNobody, Move: &approved}, got[0].event(at, cur))
	assert.Equal(t, WatchEvent{At: at, Issue: 4, Kind: "message", Text: "message to the agent queued (person): look at the labels",
		Stage: "accepted", WaitingOn: "done", WaitingFor: WaiterNobody,
		Message: &WatchMessage{ID: "m1", To: outbox.ToAgent, Kind: "person", State: outbox.Pending, Text: "look at the labels"}}, got[1].event(at, cur))
}
