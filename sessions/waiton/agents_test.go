package waiton

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

const agentsConfig = `agents:
  claude: {command: claude}
roles:
  developer: {agents: [claude]}
  reviewer: {agents: [claude], auto_start: true}
stages:
  - name: backlog
    parking_lot: true
  - name: implement
  - name: security
    role: reviewer
  - name: accepted
    terminal: completion
`

// noEndConfig declares no terminal stage: an issue at its last stage
// stays there.
const noEndConfig = `stages:
  - name: backlog
    parking_lot: true
  - name: implement
  - name: review
`

// lookOf is what status knows of issue id's agent: its session record
// (nil: none) and the live tmux sessions (nil: tmux not asked).
func lookOf(id int, rec *sessions.Record, live map[string]bool) *Look {
	look := &Look{records: map[int]*sessions.Record{}, live: live}
	if rec != nil {
		look.records[id] = rec
	}
	return look
}

func parseConfig(t *testing.T, yaml string) *stages.Config {
	t.Helper()
	cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(yaml), builtin.Registry())
	require.NoError(t, err)
	return cfg
}

// Status says "agent working" only where the session record says an
// agent of the stage's role runs; otherwise what brings one, or that
// nothing moves the issue on.
func TestStatusAgentStageWaiting(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	retry := time.Date(2025, 3, 1, 10, 30, 0, 0, time.Local)
	developer := func(f func(*sessions.Record)) *sessions.Record {
		r := &sessions.Record{Issue: 3, Role: stages.RoleDeveloper, Agent: "claude", Session: "repo-developer-3"}
		if f != nil {
			f(r)
		}
		return r
	}
	tests := []struct {
		name     string
		config   string
		stage    string
		agent    *sessions.Record
		live     map[string]bool // the live tmux sessions; nil: tmux not asked
		Who      Waiter
		What     string
		Run      []string
		NextLook time.Time
	}{
		{name: "a recorded agent, tmux not asked", config: agentsConfig, stage: "implement", agent: developer(nil),
			Who: WaiterAgent, What: "agent working (developer)", Run: []string{"agenttree next"}},
		{name: "a recorded agent tmux shows alive", config: agentsConfig, stage: "implement", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			Who: WaiterAgent, What: "agent working (developer)", Run: []string{"agenttree next"}},
		{name: "an agent a person started by hand", config: agentsConfig, stage: "implement", live: map[string]bool{"repo-developer-3": true},
			Who: WaiterAgent, What: "agent working (developer)", Run: []string{"agenttree next"}},
		{name: "a recorded agent whose session ended", config: agentsConfig, stage: "implement", agent: developer(nil), live: map[string]bool{"repo-developer-3": false},
			Who: WaiterController, What: "controller: to restart the developer agent, whose session ended (`agenttree agents`)",
			Run: []string{"agenttree controller", "agenttree start 3 --restart"}},
		{name: "a recorded agent whose session is gone", config: agentsConfig, stage: "implement", agent: developer(nil), live: map[string]bool{},
			Who: WaiterController, What: "controller: to restart the developer agent, whose session ended (`agenttree agents`)",
			Run: []string{"agenttree controller", "agenttree start 3 --restart"}},
		{name: "no session", config: agentsConfig, stage: "implement", live: map[string]bool{"other-developer-3": true},
			Who: WaiterPerson, What: "no developer agent is running: start one with `agenttree start 3`", Run: []string{"agenttree start 3"}},
		{name: "no session, tmux not asked", config: agentsConfig, stage: "implement",
			Who: WaiterPerson, What: "no developer agent is running: start one with `agenttree start 3`", Run: []string{"agenttree start 3"}},
		{name: "the session of another role", config: agentsConfig, stage: "implement", agent: developer(func(r *sessions.Record) { r.Role = "reviewer" }),
			live: map[string]bool{"repo-developer-3": true, "repo-reviewer-3": true},
			Who:  WaiterAgent, What: "agent working (developer)", Run: []string{"agenttree next"}},
		{name: "the session of another role alone", config: agentsConfig, stage: "implement", agent: developer(func(r *sessions.Record) { r.Role = "reviewer" }),
			live: map[string]bool{"repo-reviewer-3": true},
			Who:  WaiterPerson, What: "no developer agent is running: start one with `agenttree start 3`", Run: []string{"agenttree start 3"}},
		{name: "a role the controller starts", config: agentsConfig, stage: "security", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			Who: WaiterController, What: "controller: to start the reviewer agent (auto_start)", Run: []string{"agenttree controller", "agenttree start 3"}},
		{name: "stopped by a person", config: agentsConfig, stage: "implement", agent: developer(func(r *sessions.Record) { r.Stopped = at }), live: map[string]bool{},
			Who: WaiterPerson, What: "the developer agent was stopped by a person: start it again with `agenttree start 3`", Run: []string{"agenttree start 3"}},
		{name: "rate-limited", config: agentsConfig, stage: "implement", live: map[string]bool{"repo-developer-3": false},
			agent: developer(func(r *sessions.Record) { r.RetryAt, r.RateLimited, r.LastExit = retry, 2, sessions.ExitRateLimit }),
			Who:   WaiterController, What: "rate-limited: the developer agent claude restarts at 10:30",
			Run: []string{"agenttree controller", "agenttree start 3 --restart"}, NextLook: retry},
		{name: "the last stage of a flow with no end", config: noEndConfig, stage: "review", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			Who: WaiterPerson, What: "a person: review is the last stage of flow default, which has no terminal stage, so nothing moves it on " +
				"(`agenttree move 3 STAGE --reason TEXT`; give the flow a stage with `terminal: completion`)",
			Run: []string{"agenttree move 3 STAGE --reason TEXT"}},
		{name: "a stage before the end of a flow with no end", config: noEndConfig, stage: "implement", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			Who: WaiterAgent, What: "agent working (developer)", Run: []string{"agenttree next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parseConfig(t, tt.config)
			iss := &issues.Issue{ID: 3, Flow: "default", Stage: tt.stage, Created: at}
			got := On(cfg, iss, nil, lookOf(3, tt.agent, tt.live))
			assert.Equal(t, tt.Who, got.Who)
			assert.Equal(t, tt.What, got.What)
			assert.Equal(t, tt.Run, got.Run)
			assert.True(t, tt.NextLook.Equal(got.NextLook), "next look %s, want %s", got.NextLook, tt.NextLook)
		})
	}
}

// A rate-limited agent whose restart is long overdue says the controller
// may not be running: it is the controller that restarts it.
func TestStatusRateLimitOverdue(t *testing.T) {
	cfg := parseConfig(t, agentsConfig)
	retry := time.Date(2025, 3, 1, 10, 30, 0, 0, time.Local)
	iss := &issues.Issue{ID: 3, Flow: "default", Stage: "implement"}
	w := On(cfg, iss, nil, lookOf(3, &sessions.Record{Issue: 3, Role: stages.RoleDeveloper, Agent: "claude", RetryAt: retry, RateLimited: 1}, map[string]bool{}))
	assert.Equal(t, "rate-limited: the developer agent claude restarts at 10:30", w.Text(retry.Add(-time.Minute)))
	assert.Equal(t, "rate-limited: the developer agent claude restarts at 10:30; the controller is 5m0s late (is `agenttree controller` running?)",
		w.Text(retry.Add(5*time.Minute)))
}
