package statuscmd

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine/issues"
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
func lookOf(id int, rec *sessions.Record, live map[string]bool) *agentLook {
	look := &agentLook{records: map[int]*sessions.Record{}, live: live}
	if rec != nil {
		look.records[id] = rec
	}
	return look
}

func parseConfig(t *testing.T, yaml string) *stages.Config {
	t.Helper()
	cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(yaml), cmdutil.HookRegistry())
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
		who      Waiter
		what     string
		run      []string
		nextLook time.Time
	}{
		{name: "a recorded agent, tmux not asked", config: agentsConfig, stage: "implement", agent: developer(nil),
			who: WaiterAgent, what: "agent working (developer)", run: []string{"agenttree next"}},
		{name: "a recorded agent tmux shows alive", config: agentsConfig, stage: "implement", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			who: WaiterAgent, what: "agent working (developer)", run: []string{"agenttree next"}},
		{name: "an agent a person started by hand", config: agentsConfig, stage: "implement", live: map[string]bool{"repo-developer-3": true},
			who: WaiterAgent, what: "agent working (developer)", run: []string{"agenttree next"}},
		{name: "a recorded agent whose session ended", config: agentsConfig, stage: "implement", agent: developer(nil), live: map[string]bool{"repo-developer-3": false},
			who: WaiterController, what: "controller: to restart the developer agent, whose session ended (`agenttree agents`)",
			run: []string{"agenttree controller", "agenttree start 3 --restart"}},
		{name: "a recorded agent whose session is gone", config: agentsConfig, stage: "implement", agent: developer(nil), live: map[string]bool{},
			who: WaiterController, what: "controller: to restart the developer agent, whose session ended (`agenttree agents`)",
			run: []string{"agenttree controller", "agenttree start 3 --restart"}},
		{name: "no session", config: agentsConfig, stage: "implement", live: map[string]bool{"other-developer-3": true},
			who: WaiterPerson, what: "no developer agent is running: start one with `agenttree start 3`", run: []string{"agenttree start 3"}},
		{name: "no session, tmux not asked", config: agentsConfig, stage: "implement",
			who: WaiterPerson, what: "no developer agent is running: start one with `agenttree start 3`", run: []string{"agenttree start 3"}},
		{name: "the session of another role", config: agentsConfig, stage: "implement", agent: developer(func(r *sessions.Record) { r.Role = "reviewer" }),
			live: map[string]bool{"repo-developer-3": true, "repo-reviewer-3": true},
			who:  WaiterAgent, what: "agent working (developer)", run: []string{"agenttree next"}},
		{name: "the session of another role alone", config: agentsConfig, stage: "implement", agent: developer(func(r *sessions.Record) { r.Role = "reviewer" }),
			live: map[string]bool{"repo-reviewer-3": true},
			who:  WaiterPerson, what: "no developer agent is running: start one with `agenttree start 3`", run: []string{"agenttree start 3"}},
		{name: "a role the controller starts", config: agentsConfig, stage: "security", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			who: WaiterController, what: "controller: to start the reviewer agent (auto_start)", run: []string{"agenttree controller", "agenttree start 3"}},
		{name: "stopped by a person", config: agentsConfig, stage: "implement", agent: developer(func(r *sessions.Record) { r.Stopped = at }), live: map[string]bool{},
			who: WaiterPerson, what: "the developer agent was stopped by a person: start it again with `agenttree start 3`", run: []string{"agenttree start 3"}},
		{name: "rate-limited", config: agentsConfig, stage: "implement", live: map[string]bool{"repo-developer-3": false},
			agent: developer(func(r *sessions.Record) { r.RetryAt, r.RateLimited, r.LastExit = retry, 2, sessions.ExitRateLimit }),
			who:   WaiterController, what: "rate-limited: the developer agent claude restarts at 10:30",
			run: []string{"agenttree controller", "agenttree start 3 --restart"}, nextLook: retry},
		{name: "the last stage of a flow with no end", config: noEndConfig, stage: "review", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			who: WaiterPerson, what: "a person: review is the last stage of flow default, which has no terminal stage, so nothing moves it on " +
				"(`agenttree move 3 STAGE --reason TEXT`; give the flow a stage with `terminal: completion`)",
			run: []string{"agenttree move 3 STAGE --reason TEXT"}},
		{name: "a stage before the end of a flow with no end", config: noEndConfig, stage: "implement", agent: developer(nil), live: map[string]bool{"repo-developer-3": true},
			who: WaiterAgent, what: "agent working (developer)", run: []string{"agenttree next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parseConfig(t, tt.config)
			iss := &issues.Issue{ID: 3, Flow: "default", Stage: tt.stage, Created: at}
			got := waitingOn(cfg, iss, nil, lookOf(3, tt.agent, tt.live))
			assert.Equal(t, tt.who, got.who)
			assert.Equal(t, tt.what, got.what)
			assert.Equal(t, tt.run, got.run)
			assert.True(t, tt.nextLook.Equal(got.nextLook), "next look %s, want %s", got.nextLook, tt.nextLook)
		})
	}
}

// A rate-limited agent whose restart is long overdue says the controller
// may not be running: it is the controller that restarts it.
func TestStatusRateLimitOverdue(t *testing.T) {
	cfg := parseConfig(t, agentsConfig)
	retry := time.Date(2025, 3, 1, 10, 30, 0, 0, time.Local)
	iss := &issues.Issue{ID: 3, Flow: "default", Stage: "implement"}
	w := waitingOn(cfg, iss, nil, lookOf(3, &sessions.Record{Issue: 3, Role: stages.RoleDeveloper, Agent: "claude", RetryAt: retry, RateLimited: 1}, map[string]bool{}))
	assert.Equal(t, "rate-limited: the developer agent claude restarts at 10:30", w.text(retry.Add(-time.Minute)))
	assert.Equal(t, "rate-limited: the developer agent claude restarts at 10:30; the controller is 5m0s late (is `agenttree controller` running?)",
		w.text(retry.Add(5*time.Minute)))
}
