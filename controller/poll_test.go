package controller

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
	cfg := stages.CIPolling{PollInterval: 30 * time.Second, MinInterval: 30 * time.Second, MaxInterval: 300 * time.Second}
	s := time.Second
	for _, tt := range []struct {
		name string
		cur  time.Duration
		sig  signal
		want time.Duration
	}{
		{"the first poll starts at poll_interval_s", 0, sigIdle, 30 * s},
		{"idle adds 30 s", 60 * s, sigIdle, 90 * s},
		{"idle stops at the maximum", 290 * s, sigIdle, 300 * s},
		{"an event halves", 200 * s, sigEvent, 100 * s},
		{"but not below the minimum", 40 * s, sigEvent, 30 * s},
		{"a rate limit jumps to the maximum", 40 * s, sigRateLimited, 300 * s},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, adapt(tt.cur, cfg, tt.sig))
		})
	}
	fast := stages.CIPolling{PollInterval: time.Second, MinInterval: time.Second, MaxInterval: 2 * time.Second}
	assert.Equal(t, time.Second, adapt(2*time.Second, fast, sigEvent), "a configured minimum below 30 s is honoured")
}

func TestObserveBindsToTheHeadAndCountsForgeErrors(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	iss := &issues.Issue{ID: 1, PRNumber: 4, HeadSHA: "aaa"}
	p, sig := observe(nil, iss, &forge.PR{HeadSHA: "aaa"}, nil, nil, now)
	assert.Equal(t, sigIdle, sig, "the first look is no event")
	assert.Equal(t, "aaa", p.Head)
	assert.Equal(t, 1, p.Iteration)

	p, sig = observe(p, iss, &forge.PR{HeadSHA: "bbb"}, nil, nil, now.Add(time.Minute))
	assert.Equal(t, sigEvent, sig, "a push is an event")
	assert.Equal(t, "bbb", p.Head)
	assert.Equal(t, now.Add(time.Minute), p.PushedAt)
	require.NotEmpty(t, p.Actions)

	busy := &engine.Result{Status: engine.StatusWaiting, Class: hooks.ClassForge, Reasons: []string{"GitHub 502"}}
	for i := 1; i <= 3; i++ {
		p, _ = observe(p, iss, nil, busy, nil, now)
		assert.Equal(t, i, p.ForgeErrors)
	}
	limited := &engine.Result{Status: engine.StatusWaiting, Class: hooks.ClassRateLimit}
	p, sig = observe(p, iss, nil, limited, nil, now)
	assert.Equal(t, sigRateLimited, sig)
	assert.Equal(t, 4, p.ForgeErrors)
	p, _ = observe(p, iss, nil, &engine.Result{Status: engine.StatusWaiting}, nil, now)
	assert.Zero(t, p.ForgeErrors, "one good answer resets the count")

	other := &issues.Issue{ID: 1, PRNumber: 5, HeadSHA: "ccc"}
	p, _ = observe(p, other, nil, nil, nil, now)
	assert.Equal(t, 5, p.PR)
	assert.Equal(t, 1, p.Iteration, "a new PR starts afresh")
}

func TestInBatchesHoldsAtMostFiftyPRsEach(t *testing.T) {
	var due []dueIssue
	for i := range 130 {
		pr := i + 1
		if i%10 == 0 {
			pr = 0 // no PR yet: nothing to fetch
		}
		due = append(due, dueIssue{iss: &issues.Issue{ID: i + 1, PRNumber: pr}, act: true})
	}
	parts := inBatches(due)
	total := 0
	for _, p := range parts {
		n := 0
		for _, d := range p.due {
			if d.iss.PRNumber > 0 {
				n++
			}
		}
		assert.LessOrEqual(t, n, batchSize)
		assert.Equal(t, total, p.start, "the parts follow one another")
		total += len(p.due)
	}
	assert.Equal(t, len(due), total, "every due issue is in a part")
	assert.Len(t, parts, 3, "117 PRs are 3 batches")
}
