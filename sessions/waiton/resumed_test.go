package waiton

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// After a resume, what the controller's last poll saw is from before it:
// status says the controller looks again, not that checks still run, and
// counts the controller late from the resume, not from the grown
// interval's next poll.
func TestStatusAfterAResume(t *testing.T) {
	cfg := loadPipeline(t, "controller")
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	poll := &issues.Poll{PR: 1, Status: "2 of 2 checks still running on abc123def456", PushedAt: at,
		PolledAt: at.Add(time.Minute), NextAt: at.Add(6 * time.Minute)}
	base := issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, History: []issues.HistoryEntry{
		{To: "implement.code", Kind: issues.KindCreate, At: at.Add(-time.Hour)},
		{From: "implement.code", To: "pr_ready", Kind: stages.MoveAdvance, At: at},
	}}
	resumed := func(when time.Time) issues.Issue {
		iss := base
		iss.History = append(append([]issues.HistoryEntry(nil), base.History...),
			issues.HistoryEntry{From: "pr_ready", To: "pr_ready", Kind: stages.MoveResume, Actor: "human", At: when})
		return iss
	}
	for _, tt := range []struct {
		name     string
		iss      issues.Issue
		What     string
		NextLook time.Time
	}{
		{"no resume: the last poll", base, "controller: 2 of 2 checks still running on abc123def456", poll.NextAt},
		{"resumed since the last poll", resumed(at.Add(2 * time.Minute)),
			"controller: resumed by a person; it looks again at its next pass", at.Add(2 * time.Minute)},
		{"polled since the resume", resumed(at.Add(30 * time.Second)), "controller: 2 of 2 checks still running on abc123def456", poll.NextAt},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := On(cfg, &tt.iss, poll, nil)
			assert.Equal(t, WaiterController, w.Who)
			assert.Equal(t, tt.What, w.What)
			assert.Equal(t, tt.NextLook, w.NextLook)
		})
	}
}
