package metrics

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		assert.Equal(t, want, m.deliveries.Value(result), result)
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
	assert.Equal(t, 2.0, m.stepBacks.Value("ci_failed"))
	assert.Equal(t, 1.0, m.stepBacks.Value("other"))
	assert.Equal(t, 1.0, m.escalations.Value("budget"))
	assert.Equal(t, 1.0, m.escalations.Value("other"))
	assert.Equal(t, 4.0, m.due.Value())
	assert.Equal(t, len(failureKinds()), len(scrape(t, m)["agenttree_step_backs_total"].GetMetric()), "no label beyond the known kinds and other")
}

// The agenttree binary links no Prometheus client: with the protobuf it
// brought, its package init cost every command, `next` included, about
// 1.7 ms (docs/ARCHITECTURE.md §2, internal/promtext). Tests may still
// read the text with expfmt.
func TestTheBinaryLinksNoPrometheusClient(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/agenttree/agenttree/cmd/agenttree").Output()
	require.NoError(t, err)
	for pkg := range strings.FieldsSeq(string(out)) {
		// protobuf is linked again by etcd's gRPC client (state.backend
		// etcd): a cost of its own, measured in bench/README.md ("next
		// with etcd's client linked").
		assert.False(t, strings.HasPrefix(pkg, "github.com/prometheus/"),
			"cmd/agenttree links %s", pkg)
	}
}
