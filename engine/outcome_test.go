package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
)

// TestOutcomeSaysWhatTheControllerActsOn follows one issue through a
// wait, a step back for CI and an escalation: each Result's Outcome
// carries what the controller decides on, whatever the report's text.
func TestOutcomeSaysWhatTheControllerActsOn(t *testing.T) {
	s := &script{ci: []hooks.Outcome{hooks.Pending(3*time.Second, "1 of 2 checks running"), ciFailed("aaa", "test-unit", "lint")}}
	e := engineWith(t, controlled, s.registry())
	iss := create(t, e, "implement.feedback", nil)

	res := next(t, e, iss.ID, agent)
	o := res.Outcome
	assert.Equal(t, engine.StatusAdvanced, o.Status)
	assert.True(t, o.Moved)
	assert.Equal(t, "moved implement.feedback → pr_ready", o.Summary)
	assert.Equal(t, res.Version, o.Version)

	o = reconcile(t, e, iss.ID).Outcome
	assert.Equal(t, engine.StatusWaiting, o.Status)
	assert.False(t, o.Moved)
	assert.Equal(t, 3*time.Second, o.RetryAfter)
	assert.Equal(t, "1 of 2 checks running", o.Reason)
	assert.Equal(t, o.Reason, o.Summary)

	o = reconcile(t, e, iss.ID).Outcome
	require.Equal(t, engine.StatusSteppedBack, o.Status)
	assert.Equal(t, hooks.ClassCIFailed, o.Failure)
	assert.Equal(t, []string{"test-unit", "lint"}, o.Checks)
	assert.Zero(t, o.RetryAfter)
	assert.Equal(t, "stepped back pr_ready → implement.feedback: CI failed on aaa", o.Summary)

	res, err := e.Escalate(t.Context(), iss.ID, issues.EscalatedError, "the forge failed five times")
	require.NoError(t, err)
	o = res.Outcome
	require.NotNil(t, o.Escalation)
	assert.Equal(t, issues.EscalatedError, o.Escalation.Kind)
	assert.Equal(t, "escalated: the forge failed five times", o.Summary)
	assert.Empty(t, o.Failure, "no step back")
}
