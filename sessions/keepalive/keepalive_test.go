package keepalive_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/keepalive"
	"github.com/agenttree/agenttree/stages"
)

func TestDecideAfterAnExit(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	started := now.Add(-time.Hour)
	role := &stages.RoleSessions{Role: stages.RoleDeveloper, Agents: []string{"claude", "codex"},
		Fallback: stages.FallbackNextInList, MaxRestarts: 2, StallAfter: time.Minute}
	base := sessions.Record{Issue: 3, Role: stages.RoleDeveloper, Agent: "claude", Session: "shop-developer-3", Started: started}
	with := func(f func(*sessions.Record)) sessions.Record {
		r := base
		f(&r)
		return r
	}
	roleWith := func(f func(*stages.RoleSessions)) *stages.RoleSessions {
		r := *role
		f(&r)
		return &r
	}
	tests := []struct {
		name string
		rec  sessions.Record
		role *stages.RoleSessions
		exit sessions.ExitKind
		// progress is when the issue last moved; zero: before Started.
		progress   time.Time
		want       keepalive.Action
		wantAgent  string
		wantResume bool
		check      func(*testing.T, keepalive.Decision)
	}{
		{name: "a crash restarts with the resume command", rec: base, exit: sessions.ExitOther,
			want: keepalive.Restart, wantAgent: "claude", wantResume: true,
			check: func(t *testing.T, d keepalive.Decision) { assert.Equal(t, 1, d.Record.Restarts) }},
		{name: "a reboot restarts too", rec: base, exit: sessions.ExitGone,
			want: keepalive.Restart, wantAgent: "claude", wantResume: true},
		{name: "a timeout restarts", rec: with(func(r *sessions.Record) { r.Restarts = 1 }), exit: sessions.ExitTimeout,
			want: keepalive.Restart, wantAgent: "claude", wantResume: true},
		{name: "restarts spent: the next agent, fresh", rec: with(func(r *sessions.Record) { r.Restarts = 2 }), exit: sessions.ExitOther,
			want: keepalive.Restart, wantAgent: "codex",
			check: func(t *testing.T, d keepalive.Decision) {
				assert.Equal(t, 0, d.Record.Restarts)
				assert.Equal(t, 1, d.Record.Fallbacks)
				assert.Contains(t, d.Reason, "codex takes over")
			}},
		{name: "the last agent spent: a person", rec: with(func(r *sessions.Record) { r.Agent, r.Restarts, r.Fallbacks = "codex", 2, 1 }),
			exit: sessions.ExitOther, want: keepalive.Escalate,
			check: func(t *testing.T, d keepalive.Decision) {
				assert.Contains(t, d.Reason, "exited with status 1")
				assert.Contains(t, d.Reason, "`agenttree start 3 --restart`")
				assert.Contains(t, d.Reason, "`agenttree resume 3 --reason TEXT`")
			}},
		{name: "progress since the start renews the budget", rec: with(func(r *sessions.Record) { r.Restarts = 2 }),
			progress: now.Add(-time.Minute), exit: sessions.ExitOther, want: keepalive.Restart, wantAgent: "claude", wantResume: true,
			check: func(t *testing.T, d keepalive.Decision) { assert.Equal(t, 1, d.Record.Restarts) }},
		{name: "same_agent: the same agent afresh, once", rec: with(func(r *sessions.Record) { r.Restarts = 2 }),
			role: roleWith(func(r *stages.RoleSessions) { r.Fallback = stages.FallbackSameAgent }), exit: sessions.ExitOther,
			want: keepalive.Restart, wantAgent: "claude"},
		{name: "same_agent spent: a person", rec: with(func(r *sessions.Record) { r.Restarts, r.Fallbacks = 2, 1 }),
			role: roleWith(func(r *stages.RoleSessions) { r.Fallback = stages.FallbackSameAgent }), exit: sessions.ExitOther,
			want: keepalive.Escalate},
		{name: "fail: a person once the restarts are spent", rec: with(func(r *sessions.Record) { r.Restarts = 2 }),
			role: roleWith(func(r *stages.RoleSessions) { r.Fallback = stages.FallbackFail }), exit: sessions.ExitOther,
			want: keepalive.Escalate},
		{name: "an agent outside the list falls back to its first", rec: with(func(r *sessions.Record) { r.Agent, r.Restarts = "gemini", 2 }),
			exit: sessions.ExitOther, want: keepalive.Restart, wantAgent: "claude"},
		{name: "authentication is never retried", rec: base, exit: sessions.ExitAuth, want: keepalive.Escalate,
			check: func(t *testing.T, d keepalive.Decision) {
				assert.Contains(t, d.Reason, "could not authenticate")
				assert.Contains(t, d.Reason, "fix them, then `agenttree start 3 --restart` and `agenttree resume 3 --reason TEXT`")
			}},
		{name: "a rate limit waits", rec: base, exit: sessions.ExitRateLimit, want: keepalive.Save,
			check: func(t *testing.T, d keepalive.Decision) {
				assert.Equal(t, now.Add(keepalive.RateLimitWait(0)), d.Record.RetryAt)
				assert.Equal(t, 1, d.Record.RateLimited)
				assert.Equal(t, 0, d.Record.Restarts, "a rate limit spends no restart")
			}},
		{name: "during the wait: nothing", rec: with(func(r *sessions.Record) { r.RetryAt, r.RateLimited = now.Add(time.Second), 1 }),
			exit: sessions.ExitRateLimit, want: keepalive.Leave},
		{name: "after the wait: the same agent again", rec: with(func(r *sessions.Record) { r.RetryAt, r.RateLimited = now, 1 }),
			exit: sessions.ExitRateLimit, want: keepalive.Restart, wantAgent: "claude", wantResume: true,
			check: func(t *testing.T, d keepalive.Decision) { assert.True(t, d.Record.RetryAt.IsZero()) }},
		{name: "a limit that does not lift: a person", rec: with(func(r *sessions.Record) { r.RateLimited = 6 }),
			exit: sessions.ExitRateLimit, want: keepalive.Escalate},
		{name: "stopped by a person: nothing", rec: with(func(r *sessions.Record) { r.Stopped = now }), exit: sessions.ExitOther, want: keepalive.Leave},
		{name: "no restarts allowed: straight to the fallback", rec: base, role: roleWith(func(r *stages.RoleSessions) { r.MaxRestarts = 0 }),
			exit: sessions.ExitOther, want: keepalive.Restart, wantAgent: "codex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := role
			if tt.role != nil {
				r = tt.role
			}
			pane := sessions.PaneDead
			if tt.exit == sessions.ExitGone {
				pane = sessions.PaneMissing
			}
			d := keepalive.Decide(keepalive.Situation{Now: now, Record: tt.rec, Role: r, Pane: pane, Exit: tt.exit, Status: 1,
				Told: true, AtOwnStage: true, Progress: tt.progress})
			assert.Equal(t, tt.want, d.Action, d.Reason)
			if tt.wantAgent != "" {
				assert.Equal(t, tt.wantAgent, d.Record.Agent)
			}
			if d.Action == keepalive.Restart {
				assert.Equal(t, tt.wantResume, d.Resume)
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}

func TestDecideLeavesWhatIsNotItsToKeep(t *testing.T) {
	now := time.Now()
	role := &stages.RoleSessions{Agents: []string{"claude"}, MaxRestarts: 2}
	rec := sessions.Record{Issue: 1, Agent: "claude"}
	dead := keepalive.Situation{Now: now, Record: rec, Role: role, Pane: sessions.PaneDead, Exit: sessions.ExitOther, Told: true}
	tests := []struct {
		name string
		edit func(*keepalive.Situation)
	}{
		{"finished", func(s *keepalive.Situation) { s.Finished = true }},
		{"escalated", func(s *keepalive.Situation) { s.Escalated = true }},
		{"another role's issue now", func(s *keepalive.Situation) { s.Told = false }},
		{"no roles entry", func(s *keepalive.Situation) { s.Role = nil }},
		{"stopped", func(s *keepalive.Situation) { s.Record.Stopped = now }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dead
			tt.edit(&s)
			assert.Equal(t, keepalive.Leave, keepalive.Decide(s).Action)
		})
	}
}

func TestDecideOnAStall(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	role := &stages.RoleSessions{Agents: []string{"claude"}, MaxRestarts: 2, StallAfter: 10 * time.Minute}
	rec := sessions.Record{Issue: 4, Role: stages.RoleDeveloper, Agent: "claude", Started: now.Add(-time.Hour),
		Screen: "abc", ChangedAt: now.Add(-11 * time.Minute)}
	tests := []struct {
		name     string
		screen   string
		nudged   time.Time
		progress time.Time
		own      bool
		want     keepalive.Action
	}{
		{name: "a changed screen is noted", screen: "def", own: true, want: keepalive.Save},
		{name: "quiet for stall_after: a nudge", screen: "abc", own: true, want: keepalive.Nudge},
		{name: "quiet again after the nudge: a person", screen: "abc", nudged: now.Add(-20 * time.Minute), own: true, want: keepalive.Escalate},
		{name: "the issue moved lately: not stalled", screen: "abc", progress: now.Add(-time.Minute), own: true, want: keepalive.Leave},
		{name: "moved since the nudge: nudged afresh", screen: "abc", nudged: now.Add(-50 * time.Minute), progress: now.Add(-40 * time.Minute),
			own: true, want: keepalive.Nudge},
		{name: "waiting at another's stage is no stall", screen: "abc", own: false, want: keepalive.Leave},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rec
			r.NudgedAt = tt.nudged
			d := keepalive.Decide(keepalive.Situation{Now: now, Record: r, Role: role, Pane: sessions.PaneLive, Screen: tt.screen,
				Told: true, AtOwnStage: tt.own, Progress: tt.progress})
			assert.Equal(t, tt.want, d.Action, d.Reason)
			switch d.Action {
			case keepalive.Save:
				assert.Equal(t, now, d.Record.ChangedAt)
				assert.Equal(t, tt.screen, d.Record.Screen)
			case keepalive.Nudge:
				assert.Equal(t, now, d.Record.NudgedAt)
				assert.Contains(t, d.Reason, "has not changed for 11m0s")
			case keepalive.Escalate:
				assert.Contains(t, d.Reason, "`agenttree attach 4`")
			}
		})
	}
}

func TestRateLimitWaitGrowsToABound(t *testing.T) {
	assert.Equal(t, time.Minute, keepalive.RateLimitWait(0))
	assert.Equal(t, 4*time.Minute, keepalive.RateLimitWait(2))
	assert.Equal(t, 30*time.Minute, keepalive.RateLimitWait(40))
}
