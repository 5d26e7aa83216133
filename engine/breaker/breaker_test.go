package breaker_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/breaker"
	"github.com/agenttree/agenttree/engine/issues"
)

// defaults are the thresholds a config without `circuit_breaker:` gets.
var defaults = breaker.Settings{HalfOpenAfter: 2, NoProgress: 3, SameError: 3}

// step is one step back: the PR head, what failed, and the breaker after.
type step struct {
	head       string
	failing    []breaker.Failure
	state      string
	noProgress int
	sameError  int
}

func fail(check, detail string) breaker.Failure { return breaker.Failure{Check: check, Detail: detail} }

// unit fails test-unit with the same assertion, whatever else varies.
func unit(run int) []breaker.Failure {
	return []breaker.Failure{fail("test-unit", fmt.Sprintf(
		"--- FAIL: TestAdd (0.0%ds)\n    /tmp/w%d/calc_test.go:%d: expected 4 got 5\n", run, run, 10+run))}
}

func TestRecord(t *testing.T) {
	lint := []breaker.Failure{fail("lint", "calc.go:3:1: exported func Add should have comment")}
	both := append(unit(1), lint...)
	tests := []struct {
		name     string
		settings breaker.Settings
		steps    []step
		why      string // a fragment of the reason the last step opened it
	}{
		{
			name:     "the same failure three times opens, half-open on the way",
			settings: defaults,
			steps: []step{
				{"h1", unit(1), issues.BreakerClosed, 1, 1},
				{"h2", unit(2), issues.BreakerHalfOpen, 2, 2},
				{"h3", unit(3), issues.BreakerOpen, 3, 3},
			},
			why: "the same failure 3 times: test-unit: --- FAIL: TestAdd (0.03s)",
		},
		{
			name:     "different failures with progress never open",
			settings: defaults,
			steps: []step{
				{"h1", unit(1), issues.BreakerClosed, 1, 1},
				{"h2", lint, issues.BreakerClosed, 0, 1},
				{"h3", both, issues.BreakerClosed, 0, 1},
				{"h4", unit(4), issues.BreakerClosed, 0, 1},
				{"h5", lint, issues.BreakerClosed, 0, 1},
				{"h6", both, issues.BreakerClosed, 0, 1},
			},
		},
		{
			name:     "a new head with the same failing checks is no progress",
			settings: defaults,
			steps: []step{
				{"h1", []breaker.Failure{fail("test-unit", "expected 4 got 5")}, issues.BreakerClosed, 1, 1},
				{"h2", []breaker.Failure{fail("test-unit", "nil pointer dereference")}, issues.BreakerHalfOpen, 2, 1},
				{"h3", []breaker.Failure{fail("test-unit", "index out of range")}, issues.BreakerOpen, 3, 1},
			},
			why: "3 step backs without progress",
		},
		{
			name:     "other checks failing on the same head is no progress",
			settings: defaults,
			steps: []step{
				{"h1", unit(1), issues.BreakerClosed, 1, 1},
				{"h1", lint, issues.BreakerHalfOpen, 2, 1},
			},
		},
		{
			name:     "progress closes a half-open breaker and restarts the counts",
			settings: defaults,
			steps: []step{
				{"h1", unit(1), issues.BreakerClosed, 1, 1},
				{"h2", unit(2), issues.BreakerHalfOpen, 2, 2},
				{"h3", lint, issues.BreakerClosed, 0, 1},
				{"h4", lint, issues.BreakerClosed, 1, 2},
				{"h5", lint, issues.BreakerOpen, 2, 3},
			},
			why: "the same failure 3 times: lint: calc.go:3:1: exported func Add",
		},
		{
			name:     "failures that name nothing are never the same failure",
			settings: defaults,
			steps: []step{
				{"h1", nil, issues.BreakerClosed, 1, 0},
				{"h1", nil, issues.BreakerHalfOpen, 2, 0},
				{"h1", nil, issues.BreakerOpen, 3, 0},
			},
			why: "no failing check was named",
		},
		{
			name:     "thresholds of zero never trip",
			settings: breaker.Settings{},
			steps: []step{
				{"h1", unit(1), issues.BreakerClosed, 1, 1},
				{"h2", unit(2), issues.BreakerClosed, 2, 2},
				{"h3", unit(3), issues.BreakerClosed, 3, 3},
				{"h4", unit(4), issues.BreakerClosed, 4, 4},
			},
		},
		{
			name:     "the no-progress threshold alone",
			settings: breaker.Settings{HalfOpenAfter: 1, NoProgress: 2, SameError: 5},
			steps: []step{
				{"h1", unit(1), issues.BreakerHalfOpen, 1, 1},
				{"h1", unit(1), issues.BreakerOpen, 2, 2},
			},
			why: "2 step backs without progress (no new commit changed the failing checks): test-unit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b issues.Breaker
			for i, s := range tt.steps {
				next, open, why := breaker.Record(b, s.head, s.failing, tt.settings)
				require.Equal(t, s.state, next.State, "step %d: %+v", i+1, next)
				assert.Equal(t, s.noProgress, next.NoProgress, "step %d: no progress", i+1)
				assert.Equal(t, s.sameError, next.SameError, "step %d: same error", i+1)
				assert.Equal(t, s.head, next.Head)
				assert.Equal(t, breaker.Fingerprint(s.failing), next.Fingerprint)
				assert.Equal(t, s.state == issues.BreakerOpen, open, "step %d", i+1)
				if open {
					assert.Contains(t, why, tt.why)
				} else {
					assert.Empty(t, why, "step %d", i+1)
				}
				b = next
			}
		})
	}
}

func TestRecordKeepsTheFailingCheckNames(t *testing.T) {
	next, _, _ := breaker.Record(issues.Breaker{}, "h1",
		[]breaker.Failure{fail("test-unit", "a"), fail("lint", "b"), fail("test-unit", "c")}, defaults)
	assert.Equal(t, []string{"lint", "test-unit"}, next.Failing)
}

func TestRecordQuotesAFewFailures(t *testing.T) {
	var failing []breaker.Failure
	for i := range 5 {
		failing = append(failing, fail(fmt.Sprintf("check-%d", i), "\n\n  \x1b[31mboom\x1b[0m  \nstack"))
	}
	_, open, why := breaker.Record(issues.Breaker{}, "h1", failing, breaker.Settings{NoProgress: 1})
	require.True(t, open)
	assert.Equal(t, "1 step back without progress (no new commit changed the failing checks): "+
		"check-0: boom; check-1: boom; check-2: boom; and 2 more", why)
}
