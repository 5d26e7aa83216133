package statuscmd

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// loadPipeline loads testdata/pipelines/NAME.yaml.
func loadPipeline(t *testing.T, name string) *stages.Config {
	t.Helper()
	cfg, err := load.File(testpipeline.Path(t, name), cmdutil.HookRegistry())
	require.NoError(t, err)
	return cfg
}

func TestStatusWaitingOn(t *testing.T) {
	cfg := loadPipeline(t, "controller")
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	history := func(h ...issues.HistoryEntry) []issues.HistoryEntry {
		return append([]issues.HistoryEntry{{To: "implement.code", Kind: issues.KindCreate, Actor: "human", At: at}}, h...)
	}
	developer := &sessions.Record{Issue: 1, Role: stages.RoleDeveloper, Agent: "claude"}
	poll := &issues.Poll{PR: 1, Status: "3 of 7 checks still running on abc123def456", PushedAt: at.Add(time.Hour), NextAt: at.Add(2 * time.Hour)}
	tests := []struct {
		name string
		iss  issues.Issue
		poll *issues.Poll
		// agent is the issue's session record.
		agent *sessions.Record
		who   Waiter
		what  string
		run   []string
	}{
		{
			name: "CI running at a controller stage",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: poll,
			who:  WaiterController, what: "controller: 3 of 7 checks still running on abc123def456",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI done since the hook last said it ran",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: &issues.Poll{PR: 1, Status: "1 of 1 checks still running on abc123def456", Checks: &issues.Checks{Total: 1, Passing: 1}, PushedAt: at.Add(time.Hour)},
			who:  WaiterController, what: "controller: CI done (1 passed, 0 failed); it acts on it at its next pass",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI done on a head the issue has left",
			iss: issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, HeadSHA: "new456",
				EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 2}},
			poll: &issues.Poll{PR: 1, Head: "old123", Status: "rebased issue-1 onto main (now new456); CI must pass on the new head",
				Checks: &issues.Checks{Total: 1, Passing: 1}, PushedAt: at.Add(time.Hour)},
			who: WaiterController, what: "controller: rebased issue-1 onto main (now new456); CI must pass on the new head",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a poll from before the issue's last move",
			iss: issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready"},
				History: history(issues.HistoryEntry{From: "implementation_review", To: "pr_ready", Kind: stages.MoveManual, Actor: "human", Reason: "a new head", At: at.Add(2 * time.Hour)})},
			poll: &issues.Poll{PR: 1, Status: "moved pr_ready → implementation_review", PolledAt: at.Add(time.Hour)},
			who:  WaiterController, what: "controller: it looks at pr_ready at its next pass (move implementation_review → pr_ready: a new head)",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI queued at a controller stage",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: &issues.Poll{PR: 1, Checks: &issues.Checks{Total: 2, Pending: 2, Queued: 2}, PushedAt: at.Add(time.Hour)},
			who:  WaiterController, what: "controller: CI queued, 2/2 checks waiting to start",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI partly queued at a controller stage",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: &issues.Poll{PR: 1, Checks: &issues.Checks{Total: 3, Pending: 2, Queued: 1, Passing: 1}, PushedAt: at.Add(time.Hour)},
			who:  WaiterController, what: "controller: CI running, 1/3 checks done, 1 queued",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "the poll of a PR the issue no longer has",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 2, EntryPending: &issues.EntryPending{Stage: "pr_ready"}},
			poll: poll,
			who:  WaiterController, what: "controller: the entry work of pr_ready has not run yet",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a controller stage not looked at",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready"},
			who:  WaiterController, what: "controller: not looked at yet",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a refused merge at a terminal stage is not done",
			iss:  issues.Issue{ID: 1, Stage: "accepted", EntryPending: &issues.EntryPending{Stage: "accepted", Failures: []string{"merge_pr: PR #1 conflicts with main\nmore"}}},
			who:  WaiterController, what: "controller: the entry work of accepted failed and is retried: merge_pr: PR #1 conflicts with main",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{name: "done", iss: issues.Issue{ID: 1, Stage: "accepted"}, who: WaiterNobody, what: "done"},
		{name: "abandoned", iss: issues.Issue{ID: 1, Stage: "not_doing"}, who: WaiterNobody, what: "abandoned"},
		{
			name: "an agent at work",
			iss:  issues.Issue{ID: 1, Stage: "implement.code", History: history()}, agent: developer,
			who: WaiterAgent, what: "agent working (developer)", run: []string{"agenttree next"},
		},
		{
			name: "an agent after a step back",
			iss: issues.Issue{ID: 1, Stage: "implement.feedback", History: history(issues.HistoryEntry{
				From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack, Actor: "controller", Reason: "CI failed on abc: test-unit\nlog", At: at})}, agent: developer,
			who: WaiterAgent, what: "agent working (developer) after a step back: CI failed on abc: test-unit", run: []string{"agenttree next"},
		},
		{
			name: "an agent after a rejection",
			iss: issues.Issue{ID: 1, Stage: "implement.feedback", History: history(issues.HistoryEntry{
				From: "implementation_review", To: "implement.feedback", Kind: stages.MoveReject, Actor: "human", Reason: "labels", At: at})}, agent: developer,
			who: WaiterAgent, what: "agent working (developer) after a reviewer sent it back: labels", run: []string{"agenttree next"},
		},
		{
			name: "a human review",
			iss:  issues.Issue{ID: 4, Stage: "implementation_review"},
			who:  WaiterPerson, what: "waiting for human review",
			run: []string{"agenttree approve 4", "agenttree reject 4 --message TEXT"},
		},
		{
			name: "parked", iss: issues.Issue{ID: 1, Stage: "backlog"},
			who: WaiterPerson, what: "parked until a person starts it", run: []string{"agenttree next -i 1"},
		},
		{
			name: "a stage the config lost", iss: issues.Issue{ID: 1, Stage: "qa"},
			who: WaiterPerson, what: "a person: stage qa is not in the config", run: []string{"agenttree move 1 STAGE --reason TEXT"},
		},
		{
			name: "escalated",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", Escalated: &issues.Escalation{Stage: "pr_ready", Kind: "breaker", Reason: "circuit breaker open: same failure 3 times\nlast: x"}},
			who:  WaiterPerson, what: "escalated: circuit breaker open: same failure 3 times", run: ResolveCommands(1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := waitingOn(cfg, &tt.iss, tt.poll, lookOf(tt.iss.ID, tt.agent, nil))
			assert.Equal(t, tt.who, got.who)
			assert.Equal(t, tt.what, got.what)
			assert.Equal(t, tt.run, got.run)
		})
	}
}

func TestStatusWaitingText(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		w    waiting
		want string
	}{
		{"no clock", waiting{what: "done"}, "done"},
		{"for how long", waiting{what: "waiting for human review", since: at.Add(-130 * time.Second)}, "waiting for human review, for 2m10s"},
		{"hours in minutes", waiting{what: "agent working (developer)", since: at.Add(-3*time.Hour - 125*time.Second)}, "agent working (developer), for 3h2m"},
		{"an hour, almost", waiting{what: "agent working (developer)", since: at.Add(-time.Hour + time.Millisecond)}, "agent working (developer), for 1h0m"},
		{"a look due soon", waiting{what: "controller: polling", nextLook: at.Add(-time.Minute)}, "controller: polling"},
		{
			"a look long overdue", waiting{what: "controller: polling", nextLook: at.Add(-10 * time.Minute)},
			"controller: polling; the controller is 10m0s late (is `agenttree controller` running?)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.w.text(at))
		})
	}
}
