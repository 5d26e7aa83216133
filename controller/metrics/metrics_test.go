package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks"
)

func noEngine() (*engine.Engine, error) { return nil, assert.AnError }

// Only the agent's messages are tmux deliveries: taken, taken after
// retries, or typed and never taken.
func TestDeliveredCountsTheAgentsMessages(t *testing.T) {
	m := New(noEngine)
	m.Delivered([]outbox.Message{
		{To: outbox.ToAgent, State: outbox.Sent, Attempts: 1},
		{State: outbox.Sent, Attempts: 3}, // "" is the agent
		{To: outbox.ToAgent, State: outbox.Untaken, Attempts: 2},
		{To: outbox.ToManager, State: outbox.Sent, Attempts: 1},
		{To: outbox.ToNotify, State: outbox.Sent, Attempts: 4},
	})
	for result, want := range map[string]float64{"sent": 2, "retried": 1, "untaken": 1} {
		assert.Equal(t, want, testutil.ToFloat64(m.deliveries.WithLabelValues(result)), result)
	}
	var none *Metrics
	none.Delivered([]outbox.Message{{State: outbox.Sent}}) // a controller without metrics counts nothing
	none.Tick(time.Second, 1, nil)
}

// Step backs and escalations are counted by kind, a kind no version
// wrote as "other": the label set stays bounded.
func TestTickCountsStepBacksAndEscalationsByKind(t *testing.T) {
	m := New(noEngine)
	stepBack := func(c hooks.Class) *engine.Result {
		r := &engine.Result{}
		r.Outcome.Status, r.Outcome.Failure = engine.StatusSteppedBack, c
		return r
	}
	escalated := func(k issues.EscalationKind) *engine.Result {
		r := &engine.Result{}
		r.Outcome.Status, r.Outcome.Escalation = engine.StatusEscalated, &issues.Escalation{Kind: k}
		return r
	}
	m.Tick(2*time.Second, 4, []*engine.Result{stepBack(hooks.ClassCIFailed), stepBack(hooks.ClassCIFailed), stepBack("made_up"),
		escalated(issues.EscalatedBudget), escalated("made_up"), {}})
	assert.Equal(t, 2.0, testutil.ToFloat64(m.stepBacks.WithLabelValues("ci_failed")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.stepBacks.WithLabelValues("other")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.escalations.WithLabelValues("budget")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.escalations.WithLabelValues("other")))
	assert.Equal(t, 4.0, testutil.ToFloat64(m.due))
	assert.Equal(t, len(failureKinds()), testutil.CollectAndCount(m.stepBacks), "no label beyond the known kinds and other")
}
