package sessions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/stages"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		status int
		output string
		want   sessions.ExitKind
	}{
		{"timeout(1)", 124, "working...", sessions.ExitTimeout},
		{"killed", 137, "Error: 401 Unauthorized", sessions.ExitTimeout},
		{"bad key", 1, "Error: Invalid API key. Run /login", sessions.ExitAuth},
		{"http 401", 1, "request failed: HTTP 401", sessions.ExitAuth},
		{"unauthorized", 2, "UNAUTHORIZED", sessions.ExitAuth},
		{"rate limit", 1, "Rate limit reached; try again later", sessions.ExitRateLimit},
		{"429", 1, "status 429 Too Many Requests", sessions.ExitRateLimit},
		{"quota", 1, "You exceeded your current quota", sessions.ExitRateLimit},
		{"auth before rate limit", 1, "429 after authentication failed", sessions.ExitAuth},
		{"a number that contains 401", 1, "processed 14012 rows", sessions.ExitOther},
		{"a word that contains quota", 1, "quotas.go:12: panic", sessions.ExitOther},
		{"crash", 2, "panic: nil map", sessions.ExitOther},
		{"clean exit", 0, "bye", sessions.ExitOther},
		{"only the last lines count", 1, "GET /login 401\n" + repeatLine("compiling", 15) + "panic: boom", sessions.ExitOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, sessions.Classify(tt.status, tt.output))
		})
	}
}

func repeatLine(line string, n int) string { return strings.Repeat(line+"\n", n) }

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
		want       sessions.Action
		wantAgent  string
		wantResume bool
		check      func(*testing.T, sessions.Decision)
	}{
		{name: "a crash restarts with the resume command", rec: base, exit: sessions.ExitOther,
			want: sessions.Restart, wantAgent: "claude", wantResume: true,
			check: func(t *testing.T, d sessions.Decision) { assert.Equal(t, 1, d.Record.Restarts) }},
		{name: "a reboot restarts too", rec: base, exit: sessions.ExitGone,
			want: sessions.Restart, wantAgent: "claude", wantResume: true},
		{name: "a timeout restarts", rec: with(func(r *sessions.Record) { r.Restarts = 1 }), exit: sessions.ExitTimeout,
			want: sessions.Restart, wantAgent: "claude", wantResume: true},
		{name: "restarts spent: the next agent, fresh", rec: with(func(r *sessions.Record) { r.Restarts = 2 }), exit: sessions.ExitOther,
			want: sessions.Restart, wantAgent: "codex",
			check: func(t *testing.T, d sessions.Decision) {
				assert.Equal(t, 0, d.Record.Restarts)
				assert.Equal(t, 1, d.Record.Fallbacks)
				assert.Contains(t, d.Reason, "codex takes over")
			}},
		{name: "the last agent spent: a person", rec: with(func(r *sessions.Record) { r.Agent, r.Restarts, r.Fallbacks = "codex", 2, 1 }),
			exit: sessions.ExitOther, want: sessions.Escalate,
			check: func(t *testing.T, d sessions.Decision) {
				assert.Contains(t, d.Reason, "exited with status 1")
				assert.Contains(t, d.Reason, "`agenttree start 3 --restart`")
				assert.Contains(t, d.Reason, "`agenttree resume 3 --reason TEXT`")
			}},
		{name: "progress since the start renews the budget", rec: with(func(r *sessions.Record) { r.Restarts = 2 }),
			progress: now.Add(-time.Minute), exit: sessions.ExitOther, want: sessions.Restart, wantAgent: "claude", wantResume: true,
			check: func(t *testing.T, d sessions.Decision) { assert.Equal(t, 1, d.Record.Restarts) }},
		{name: "same_agent: the same agent afresh, once", rec: with(func(r *sessions.Record) { r.Restarts = 2 }),
			role: roleWith(func(r *stages.RoleSessions) { r.Fallback = stages.FallbackSameAgent }), exit: sessions.ExitOther,
			want: sessions.Restart, wantAgent: "claude"},
		{name: "same_agent spent: a person", rec: with(func(r *sessions.Record) { r.Restarts, r.Fallbacks = 2, 1 }),
			role: roleWith(func(r *stages.RoleSessions) { r.Fallback = stages.FallbackSameAgent }), exit: sessions.ExitOther,
			want: sessions.Escalate},
		{name: "fail: a person once the restarts are spent", rec: with(func(r *sessions.Record) { r.Restarts = 2 }),
			role: roleWith(func(r *stages.RoleSessions) { r.Fallback = stages.FallbackFail }), exit: sessions.ExitOther,
			want: sessions.Escalate},
		{name: "an agent outside the list falls back to its first", rec: with(func(r *sessions.Record) { r.Agent, r.Restarts = "gemini", 2 }),
			exit: sessions.ExitOther, want: sessions.Restart, wantAgent: "claude"},
		{name: "authentication is never retried", rec: base, exit: sessions.ExitAuth, want: sessions.Escalate,
			check: func(t *testing.T, d sessions.Decision) {
				assert.Contains(t, d.Reason, "could not authenticate")
				assert.Contains(t, d.Reason, "fix them, then `agenttree start 3 --restart` and `agenttree resume 3 --reason TEXT`")
			}},
		{name: "a rate limit waits", rec: base, exit: sessions.ExitRateLimit, want: sessions.Save,
			check: func(t *testing.T, d sessions.Decision) {
				assert.Equal(t, now.Add(sessions.RateLimitWait(0)), d.Record.RetryAt)
				assert.Equal(t, 1, d.Record.RateLimited)
				assert.Equal(t, 0, d.Record.Restarts, "a rate limit spends no restart")
			}},
		{name: "during the wait: nothing", rec: with(func(r *sessions.Record) { r.RetryAt, r.RateLimited = now.Add(time.Second), 1 }),
			exit: sessions.ExitRateLimit, want: sessions.Leave},
		{name: "after the wait: the same agent again", rec: with(func(r *sessions.Record) { r.RetryAt, r.RateLimited = now, 1 }),
			exit: sessions.ExitRateLimit, want: sessions.Restart, wantAgent: "claude", wantResume: true,
			check: func(t *testing.T, d sessions.Decision) { assert.True(t, d.Record.RetryAt.IsZero()) }},
		{name: "a limit that does not lift: a person", rec: with(func(r *sessions.Record) { r.RateLimited = 6 }),
			exit: sessions.ExitRateLimit, want: sessions.Escalate},
		{name: "stopped by a person: nothing", rec: with(func(r *sessions.Record) { r.Stopped = now }), exit: sessions.ExitOther, want: sessions.Leave},
		{name: "no restarts allowed: straight to the fallback", rec: base, role: roleWith(func(r *stages.RoleSessions) { r.MaxRestarts = 0 }),
			exit: sessions.ExitOther, want: sessions.Restart, wantAgent: "codex"},
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
			d := sessions.Decide(sessions.Situation{Now: now, Record: tt.rec, Role: r, Pane: pane, Exit: tt.exit, Status: 1,
				Told: true, AtOwnStage: true, Progress: tt.progress})
			assert.Equal(t, tt.want, d.Action, d.Reason)
			if tt.wantAgent != "" {
				assert.Equal(t, tt.wantAgent, d.Record.Agent)
			}
			if d.Action == sessions.Restart {
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
	dead := sessions.Situation{Now: now, Record: rec, Role: role, Pane: sessions.PaneDead, Exit: sessions.ExitOther, Told: true}
	tests := []struct {
		name string
		edit func(*sessions.Situation)
	}{
		{"finished", func(s *sessions.Situation) { s.Finished = true }},
		{"escalated", func(s *sessions.Situation) { s.Escalated = true }},
		{"another role's issue now", func(s *sessions.Situation) { s.Told = false }},
		{"no roles entry", func(s *sessions.Situation) { s.Role = nil }},
		{"stopped", func(s *sessions.Situation) { s.Record.Stopped = now }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dead
			tt.edit(&s)
			assert.Equal(t, sessions.Leave, sessions.Decide(s).Action)
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
		want     sessions.Action
	}{
		{name: "a changed screen is noted", screen: "def", own: true, want: sessions.Save},
		{name: "quiet for stall_after: a nudge", screen: "abc", own: true, want: sessions.Nudge},
		{name: "quiet again after the nudge: a person", screen: "abc", nudged: now.Add(-20 * time.Minute), own: true, want: sessions.Escalate},
		{name: "the issue moved lately: not stalled", screen: "abc", progress: now.Add(-time.Minute), own: true, want: sessions.Leave},
		{name: "moved since the nudge: nudged afresh", screen: "abc", nudged: now.Add(-50 * time.Minute), progress: now.Add(-40 * time.Minute),
			own: true, want: sessions.Nudge},
		{name: "waiting at another's stage is no stall", screen: "abc", own: false, want: sessions.Leave},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rec
			r.NudgedAt = tt.nudged
			d := sessions.Decide(sessions.Situation{Now: now, Record: r, Role: role, Pane: sessions.PaneLive, Screen: tt.screen,
				Told: true, AtOwnStage: tt.own, Progress: tt.progress})
			assert.Equal(t, tt.want, d.Action, d.Reason)
			switch d.Action {
			case sessions.Save:
				assert.Equal(t, now, d.Record.ChangedAt)
				assert.Equal(t, tt.screen, d.Record.Screen)
			case sessions.Nudge:
				assert.Equal(t, now, d.Record.NudgedAt)
				assert.Contains(t, d.Reason, "has not changed for 11m0s")
			case sessions.Escalate:
				assert.Contains(t, d.Reason, "`agenttree attach 4`")
			}
		})
	}
}

func TestRateLimitWaitGrowsToABound(t *testing.T) {
	assert.Equal(t, time.Minute, sessions.RateLimitWait(0))
	assert.Equal(t, 4*time.Minute, sessions.RateLimitWait(2))
	assert.Equal(t, 30*time.Minute, sessions.RateLimitWait(40))
}
