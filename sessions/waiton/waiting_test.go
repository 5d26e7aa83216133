package waiton

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// loadPipeline loads testdata/pipelines/NAME.yaml.
func loadPipeline(t *testing.T, name string) *stages.Config {
	t.Helper()
	cfg, err := load.File(testpipeline.Path(t, name), builtin.Registry())
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
		Who   Waiter
		What  string
		Run   []string
	}{
		{
			name: "CI running at a controller stage",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: poll,
			Who:  WaiterController, What: "controller: 3 of 7 checks still running on abc123def456",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI done since the hook last said it ran",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: &issues.Poll{PR: 1, Status: "1 of 1 checks still running on abc123def456", Checks: &issues.Checks{Total: 1, Passing: 1}, PushedAt: at.Add(time.Hour)},
			Who:  WaiterController, What: "controller: CI done (1 passed, 0 failed); it acts on it at its next pass",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI done on a head the issue has left",
			iss: issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, HeadSHA: "new456",
				EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 2}},
			poll: &issues.Poll{PR: 1, Head: "old123", Status: "rebased issue-1 onto main (now new456); CI must pass on the new head",
				Checks: &issues.Checks{Total: 1, Passing: 1}, PushedAt: at.Add(time.Hour)},
			Who: WaiterController, What: "controller: rebased issue-1 onto main (now new456); CI must pass on the new head",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a poll from before the issue's last move",
			iss: issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready"},
				History: history(issues.HistoryEntry{From: "implementation_review", To: "pr_ready", Kind: stages.MoveManual, Actor: "human", Reason: "a new head", At: at.Add(2 * time.Hour)})},
			poll: &issues.Poll{PR: 1, Status: "moved pr_ready → implementation_review", PolledAt: at.Add(time.Hour)},
			Who:  WaiterController, What: "controller: it looks at pr_ready at its next pass (move implementation_review → pr_ready: a new head)",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI queued at a controller stage",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: &issues.Poll{PR: 1, Checks: &issues.Checks{Total: 2, Pending: 2, Queued: 2}, PushedAt: at.Add(time.Hour)},
			Who:  WaiterController, What: "controller: CI queued, 2/2 checks waiting to start",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "CI partly queued at a controller stage",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: &issues.Poll{PR: 1, Checks: &issues.Checks{Total: 3, Pending: 2, Queued: 1, Passing: 1}, PushedAt: at.Add(time.Hour)},
			Who:  WaiterController, What: "controller: CI running, 1/3 checks done, 1 queued",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "the poll of a PR the issue no longer has",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 2, EntryPending: &issues.EntryPending{Stage: "pr_ready"}},
			poll: poll,
			Who:  WaiterController, What: "controller: the entry work of pr_ready has not run yet",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a controller stage not looked at",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready"},
			Who:  WaiterController, What: "controller: not looked at yet",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a refused merge at a terminal stage is not done",
			iss:  issues.Issue{ID: 1, Stage: "accepted", EntryPending: &issues.EntryPending{Stage: "accepted", Failures: []string{"merge_pr: PR #1 conflicts with main\nmore"}}},
			Who:  WaiterController, What: "controller: the entry work of accepted failed and is retried: merge_pr: PR #1 conflicts with main",
			Run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{name: "done", iss: issues.Issue{ID: 1, Stage: "accepted"}, Who: WaiterNobody, What: "done"},
		{name: "abandoned", iss: issues.Issue{ID: 1, Stage: "not_doing"}, Who: WaiterNobody, What: "abandoned"},
		{
			name: "an agent at work",
			iss:  issues.Issue{ID: 1, Stage: "implement.code", History: history()}, agent: developer,
			Who: WaiterAgent, What: "agent working (developer)", Run: []string{"agenttree next"},
		},
		{
			name: "an agent after a step back",
			iss: issues.Issue{ID: 1, Stage: "implement.feedback", History: history(issues.HistoryEntry{
				From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack, Actor: "controller", Reason: "CI failed on abc: test-unit\nlog", At: at})}, agent: developer,
			Who: WaiterAgent, What: "agent working (developer) after a step back: CI failed on abc: test-unit", Run: []string{"agenttree next"},
		},
		{
			name: "an agent after a rejection",
			iss: issues.Issue{ID: 1, Stage: "implement.feedback", History: history(issues.HistoryEntry{
				From: "implementation_review", To: "implement.feedback", Kind: stages.MoveReject, Actor: "human", Reason: "labels", At: at})}, agent: developer,
			Who: WaiterAgent, What: "agent working (developer) after a reviewer sent it back: labels", Run: []string{"agenttree next"},
		},
		{
			name: "a human review",
			iss:  issues.Issue{ID: 4, Stage: "implementation_review"},
			Who:  WaiterPerson, What: "waiting for human review",
			Run: []string{"agenttree approve 4", "agenttree reject 4 --message TEXT"},
		},
		{
			name: "parked", iss: issues.Issue{ID: 1, Stage: "backlog"},
			Who: WaiterPerson, What: "parked until a person starts it", Run: []string{"agenttree next -i 1"},
		},
		{
			name: "a stage the config lost", iss: issues.Issue{ID: 1, Stage: "qa"},
			Who: WaiterPerson, What: "a person: stage qa is not in the config", Run: []string{"agenttree move 1 STAGE --reason TEXT"},
		},
		{
			name: "escalated",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", Escalated: &issues.Escalation{Stage: "pr_ready", Kind: "breaker", Reason: "circuit breaker open: same failure 3 times\nlast: x"}},
			Who:  WaiterPerson, What: "escalated: circuit breaker open: same failure 3 times", Run: ResolveCommands(1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := On(cfg, &tt.iss, tt.poll, lookOf(tt.iss.ID, tt.agent, nil))
			assert.Equal(t, tt.Who, got.Who)
			assert.Equal(t, tt.What, got.What)
			assert.Equal(t, tt.Run, got.Run)
		})
	}
}

func TestStatusWaitingText(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		w    Waiting
		want string
	}{
		{"no clock", Waiting{What: "done"}, "done"},
		{"for how long", Waiting{What: "waiting for human review", Since: at.Add(-130 * time.Second)}, "waiting for human review, for 2m10s"},
		{"hours in minutes", Waiting{What: "agent working (developer)", Since: at.Add(-3*time.Hour - 125*time.Second)}, "agent working (developer), for 3h2m"},
		{"an hour, almost", Waiting{What: "agent working (developer)", Since: at.Add(-time.Hour + time.Millisecond)}, "agent working (developer), for 1h0m"},
		{"a look due soon", Waiting{What: "controller: polling", NextLook: at.Add(-time.Minute)}, "controller: polling"},
		{
			"a look long overdue", Waiting{What: "controller: polling", NextLook: at.Add(-10 * time.Minute)},
			"controller: polling; the controller is 10m0s late (is `agenttree controller` running?)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.w.Text(at))
		})
	}
}
