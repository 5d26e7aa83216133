package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/internal/gittest"
)

// TestControllerBreakerOpensOnTradedFailures: an agent that trades one CI
// failure for another (TestCart, then TestPay, then TestCart again) makes
// no progress, whatever the fingerprints say. pr_ready's own breaker
// half-opens at the second failure, and people are warned with what closes
// and opens it; at the third it opens, long before the budget, and people
// are told. Nothing of the traced CI command reaches what they read.
func TestControllerBreakerOpensOnTradedFailures(t *testing.T) {
	r := newRig(t, "controller-breaker")
	ctl := r.startController(t)
	id := r.startIssue(t) // CI: TestCart fails

	r.waitFor(t, id, "stepped back once", steppedBack(1))
	gittest.Commit(t, r.dir, "pay.txt", "pay\n", "fix the cart, break the payment")
	r.agentNext(t, id) // CI: TestPay fails

	half := r.waitFor(t, id, "stepped back twice", steppedBack(2))
	require.NotNil(t, half.Breaker)
	assert.Equal(t, issues.BreakerHalfOpen, half.Breaker.State, "%+v", half.Breaker)
	block := r.run(t, humanEnv, "status", itoa(id), "--block")
	require.Equal(t, exitOK, block.code, "stdout %s stderr %s", block.stdout, block.stderr)
	assert.Contains(t, block.stdout, "warning:     circuit breaker half-open: 2 failures without progress; 1 more failure without progress opens it and calls a person;")
	assert.Contains(t, block.stdout, "budgets:     ci_failed 2/10,")
	list := r.run(t, humanEnv, "status")
	assert.Contains(t, list.stdout, "issue "+itoa(id)+": circuit breaker half-open", "status lists the warning under its table")

	gittest.Run(t, r.dir, "rm", "-q", "pay.txt")
	gittest.Run(t, r.dir, "commit", "-q", "-m", "fix the payment, break the cart again")
	r.agentNext(t, id) // CI: TestCart fails again

	iss := r.waitFor(t, id, "escalated", func(iss *issues.Issue) bool { return iss.Escalated != nil })
	require.NotNil(t, iss.Breaker)
	assert.Equal(t, issues.EscalatedBreaker, iss.Escalated.Kind)
	assert.Equal(t, issues.BreakerOpen, iss.Breaker.State)
	assert.Equal(t, 3, iss.Breaker.NoProgress)
	assert.Equal(t, 2, iss.Attempts["ci_failed"], "two step backs; the failure that opened the breaker is none")
	reason := iss.Escalated.Reason
	assert.Contains(t, reason, "circuit breaker open: 3 failures without progress (no new commit made fewer checks fail): ci: FAIL: TestCart: expected 4, got 5")
	assert.LessOrEqual(t, utf8.RuneCountInString(reason), policy.ReasonLen, reason)
	for _, echo := range []string{"+ echo", "+ test -f", "set -x"} {
		assert.NotContains(t, reason, echo, "the trace of the command is no part of the reason")
	}

	// People were told both times: the warning, then the escalation, in
	// the log and through notify.command.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		box, err := r.outbox(id).Recent(0)
		require.NoError(c, err)
		for _, kind := range []string{"breaker", "escalation"} {
			assert.True(c, slices.ContainsFunc(box, func(m outbox.Message) bool {
				return m.To == outbox.ToManager && m.Kind == kind && m.State == outbox.Sent
			}), "a %s message reached people; the outbox holds %+v", kind, box)
		}
		events, err := os.ReadFile(filepath.Join(r.dir, "_agenttree", "events.txt"))
		require.NoError(c, err)
		lines := strings.Split(strings.TrimSpace(string(events)), "\n")
		require.Len(c, lines, 2, "%s", events)
		assert.Contains(c, lines[0], "breaker|issue "+itoa(id)+" (Add checkout page) failed at pr_ready again: circuit breaker half-open")
		assert.Contains(c, lines[1], "escalation|issue "+itoa(id)+" (Add checkout page) needs a person at pr_ready: wait_for_ci: circuit breaker open")
	}, settleWithin, lookEvery)
	stopController(t, ctl)

	block = r.run(t, humanEnv, "status", itoa(id), "--block")
	require.Equal(t, exitOK, block.code, "stdout %s stderr %s", block.stdout, block.stderr)
	assert.Contains(t, block.stdout, "breaker:     open (no progress 3, same error 1)")
	assert.Contains(t, block.stdout, "budgets:     ci_failed 2/10,")
	assert.NotContains(t, block.stdout, "warning:     circuit breaker", "an open breaker is an escalation, not a warning")
}
