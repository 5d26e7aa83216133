package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
)

// A pass of the controller's stage is progress: the issue leaves it with
// its breaker closed and its counts cleared, so a failure after review
// starts afresh.
func TestAPassClosesTheBreaker(t *testing.T) {
	s := &script{ci: []hooks.Outcome{ciFailed("aaa", "lint"), ciFailed("bbb", "unit"), hooks.Pass()}}
	e := engineWith(t, controlled, s.registry())
	iss := create(t, e, "implement.feedback", nil)
	for n := 1; n <= 2; n++ {
		require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
		require.Equal(t, engine.StatusSteppedBack, reconcile(t, e, iss.ID).Status)
	}
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Breaker)
	assert.Equal(t, issues.BreakerHalfOpen, got.Breaker.State, "lint traded for unit is no progress")

	require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
	res := reconcile(t, e, iss.ID)
	require.Equal(t, "review", res.To, res.Reasons)
	got, err = e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, &issues.Breaker{State: issues.BreakerClosed}, got.Breaker)
	assert.Equal(t, 2, got.Attempts[string(hooks.ClassCIFailed)], "a pass is progress for the breaker; the budget counts on")
}
