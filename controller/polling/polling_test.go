package polling

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

func TestAdaptiveInterval(t *testing.T) {
	s := time.Second
	cfg := stages.CIPolling{PollInterval: 30 * s, MinInterval: 30 * s, MaxInterval: 300 * s}
	slow := stages.CIPolling{PollInterval: 60 * s, MinInterval: 30 * s, MaxInterval: 300 * s}
	fast := stages.CIPolling{PollInterval: 3 * s, MinInterval: 3 * s, MaxInterval: 300 * s}
	for _, tt := range []struct {
		name string
		cfg  stages.CIPolling
		cur  time.Duration
		sig  Signal
		want time.Duration
	}{
		{"the first poll starts at poll_interval_s", cfg, 0, Idle, 30 * s},
		{"idle adds 30 s", cfg, 60 * s, Idle, 90 * s},
		{"idle stops at the maximum", cfg, 290 * s, Idle, 300 * s},
		{"an event goes back to the first interval", cfg, 200 * s, Event, 30 * s},
		{"an event halves below the first interval", slow, 60 * s, Event, 30 * s},
		{"but not below the minimum", slow, 40 * s, Event, 30 * s},
		{"a rate limit jumps to the maximum", cfg, 40 * s, RateLimited, 300 * s},
		{"a first interval below 30 s grows by itself", fast, 3 * s, Idle, 6 * s},
		{"and starts there", fast, 0, Idle, 3 * s},
		{"an event after growing is back to it", fast, 300 * s, Event, 3 * s},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Adapt(tt.cur, tt.cfg, tt.sig))
		})
	}
	tiny := stages.CIPolling{PollInterval: time.Second, MinInterval: time.Second, MaxInterval: 2 * time.Second}
	assert.Equal(t, time.Second, Adapt(2*time.Second, tiny, Event), "a configured minimum below 30 s is honoured")
}

func TestObserveBindsToTheHeadAndCountsForgeErrors(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	iss := &issues.Issue{ID: 1, PRNumber: 4, HeadSHA: "aaa"}
	p, sig, _ := Observe(nil, Look{Issue: iss, PR: &forge.PR{HeadSHA: "aaa"}, Now: now})
	assert.Equal(t, Idle, sig, "the first look is no event")
	assert.Equal(t, "aaa", p.Head)
	assert.Equal(t, 1, p.Iteration)

	p, sig, _ = Observe(p, Look{Issue: iss, PR: &forge.PR{HeadSHA: "bbb"}, Now: now.Add(time.Minute)})
	assert.Equal(t, Event, sig, "a push is an event")
	assert.Equal(t, "bbb", p.Head)
	assert.Equal(t, now.Add(time.Minute), p.PushedAt)
	require.NotEmpty(t, p.Actions)

	busy := &engine.Outcome{Status: engine.StatusWaiting, Class: hooks.ClassForge, Reason: "GitHub 502", Summary: "GitHub 502"}
	for i := 1; i <= 3; i++ {
		p, _, _ = Observe(p, Look{Issue: iss, Out: busy, Now: now})
		assert.Equal(t, i, p.ForgeErrors)
	}
	limited := &engine.Outcome{Status: engine.StatusWaiting, Class: hooks.ClassRateLimit, Summary: "waiting"}
	p, sig, _ = Observe(p, Look{Issue: iss, Out: limited, Now: now})
	assert.Equal(t, RateLimited, sig)
	assert.Equal(t, 4, p.ForgeErrors)
	p, _, _ = Observe(p, Look{Issue: iss, Out: &engine.Outcome{Status: engine.StatusWaiting, Summary: "waiting"}, Now: now})
	assert.Zero(t, p.ForgeErrors, "one good answer resets the count")

	other := &issues.Issue{ID: 1, PRNumber: 5, HeadSHA: "ccc"}
	p, _, _ = Observe(p, Look{Issue: other, Now: now})
	assert.Equal(t, 5, p.PR)
	assert.Equal(t, 1, p.Iteration, "a new PR starts afresh")
}
