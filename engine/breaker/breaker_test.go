package breaker_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/breaker"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
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
			why: "the same failure 3 times in a row: test-unit: --- FAIL: TestAdd (0.03s)",
		},
		{
			name:     "fewer failing checks on a new head is progress",
			settings: defaults,
			steps: []step{
				{"h1", both, issues.BreakerClosed, 1, 1},
				{"h2", unit(2), issues.BreakerClosed, 0, 1},
				{"h3", unit(3), issues.BreakerClosed, 1, 2},
			},
		},
		{
			name:     "a failure traded for another is no progress",
			settings: defaults,
			steps: []step{
				{"h1", unit(1), issues.BreakerClosed, 1, 1},
				{"h2", lint, issues.BreakerHalfOpen, 2, 1},
				{"h3", unit(3), issues.BreakerOpen, 3, 1},
			},
			why: "3 failures without progress (no new commit made fewer checks fail): test-unit: --- FAIL: TestAdd (0.03s)",
		},
		{
			name:     "a failure that comes and goes is progress once",
			settings: defaults,
			steps: []step{
				{"h1", both, issues.BreakerClosed, 1, 1},
				{"h2", unit(2), issues.BreakerClosed, 0, 1},
				{"h3", both, issues.BreakerClosed, 1, 1},
				{"h4", unit(4), issues.BreakerHalfOpen, 2, 1},
				{"h5", both, issues.BreakerOpen, 3, 1},
			},
			why: "3 failures without progress",
		},
		{
			name:     "fewer failure lines of the same check is progress, other lines are not",
			settings: defaults,
			steps: []step{
				{"h1", []breaker.Failure{fail("ci", "FAIL TestA\nFAIL TestB")}, issues.BreakerClosed, 1, 1},
				{"h2", []breaker.Failure{fail("ci", "FAIL TestB")}, issues.BreakerClosed, 0, 1},
				{"h3", []breaker.Failure{fail("ci", "FAIL TestA")}, issues.BreakerClosed, 1, 1},
				{"h4", []breaker.Failure{fail("ci", "FAIL TestB")}, issues.BreakerHalfOpen, 2, 1},
				{"h5", []breaker.Failure{fail("ci", "FAIL TestA")}, issues.BreakerOpen, 3, 1},
			},
			why: "3 failures without progress",
		},
		{
			name:     "a new head with the same failing checks is no progress",
			settings: defaults,
			steps: []step{
				{"h1", []breaker.Failure{fail("test-unit", "expected 4 got 5")}, issues.BreakerClosed, 1, 1},
				{"h2", []breaker.Failure{fail("test-unit", "nil pointer dereference")}, issues.BreakerHalfOpen, 2, 1},
				{"h3", []breaker.Failure{fail("test-unit", "index out of range")}, issues.BreakerOpen, 3, 1},
			},
			why: "3 failures without progress",
		},
		{
			name:     "fewer checks failing on the same head is no progress",
			settings: defaults,
			steps: []step{
				{"h1", both, issues.BreakerClosed, 1, 1},
				{"h1", lint, issues.BreakerHalfOpen, 2, 1},
			},
		},
		{
			name:     "progress closes a half-open breaker and restarts the counts",
			settings: defaults,
			steps: []step{
				{"h1", both, issues.BreakerClosed, 1, 1},
				{"h2", both, issues.BreakerHalfOpen, 2, 2},
				{"h3", lint, issues.BreakerClosed, 0, 1},
				{"h4", lint, issues.BreakerClosed, 1, 2},
				{"h5", lint, issues.BreakerOpen, 2, 3},
			},
			why: "the same failure 3 times in a row: lint: calc.go:3:1: exported func Add",
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
			why: "2 failures without progress (no new commit made fewer checks fail): test-unit",
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
	assert.Equal(t, "1 failure without progress (no new commit made fewer checks fail): "+
		"check-0: boom; check-1: boom; check-2: boom; and 2 more", why)
}

func TestPassedClosesTheBreakerAndForgetsTheFewest(t *testing.T) {
	b, _, _ := breaker.Record(issues.Breaker{}, "h1", unit(1), defaults)
	b, _, _ = breaker.Record(b, "h2", unit(2), defaults)
	require.Equal(t, issues.BreakerHalfOpen, b.State)

	b = breaker.Passed()
	assert.Equal(t, issues.Breaker{State: issues.BreakerClosed}, b)
	// After the pass, the next failure is the first again, whatever it is.
	b, open, _ := breaker.Record(b, "h3", unit(3), defaults)
	assert.False(t, open)
	assert.Equal(t, issues.BreakerClosed, b.State)
	assert.Equal(t, 1, b.NoProgress)
	assert.Equal(t, 1, b.SameError)
}

func TestHalfOpenSaysWhatClosesAndOpensIt(t *testing.T) {
	b, _, _ := breaker.Record(issues.Breaker{}, "h1", unit(1), defaults)
	b, _, _ = breaker.Record(b, "h2", unit(2), defaults)
	require.Equal(t, issues.BreakerHalfOpen, b.State)
	assert.Equal(t, "circuit breaker half-open: 2 failures without progress; 1 more failure without progress "+
		"opens it and calls a person; "+
		"a pass, or a new commit on which fewer checks (or lines of a check) fail, closes it",
		breaker.HalfOpen(b, defaults))

	sooner := breaker.Settings{HalfOpenAfter: 1, NoProgress: 5, SameError: 2}
	assert.Equal(t, "circuit breaker half-open: 1 failure without progress; 4 more failures without progress "+
		"or the same failure 1 more time opens it and calls a person; "+
		"a pass, or a new commit on which fewer checks (or lines of a check) fail, closes it",
		breaker.HalfOpen(issues.Breaker{State: issues.BreakerHalfOpen, NoProgress: 1, SameError: 1}, sooner),
		"the same failure is named when it opens the breaker sooner")

	wide := breaker.Settings{HalfOpenAfter: 1, NoProgress: 4}
	assert.Equal(t, "circuit breaker half-open: 1 failure without progress; 3 more failures without progress opens it and calls a person; "+
		"a pass, or a new commit on which fewer checks (or lines of a check) fail, closes it",
		breaker.HalfOpen(issues.Breaker{State: issues.BreakerHalfOpen, NoProgress: 1, SameError: 1}, wide))
}

// A reason quotes each failure in a few words, however long what it
// printed: the echo of a long command is no part of it.
func TestRecordQuotesFailuresBriefly(t *testing.T) {
	script := strings.Repeat("gh pr checks $pr_number --json state -q '.[] | select(.state != \"SUCCESS\")'; ", 8)
	detail := fmt.Sprintf("command %q failed (exit 1, general):\nCI failed", script)
	long := []breaker.Failure{
		fail("general", detail),
		fail("test-unit", "+ go test -run TestAdd ./...\n--- FAIL: TestAdd: "+strings.Repeat("expected 4 got 5, ", 20)),
	}
	_, open, why := breaker.Record(issues.Breaker{}, "h1", long, breaker.Settings{NoProgress: 1})
	require.True(t, open)
	assert.NotContains(t, why, "gh pr checks")
	assert.NotContains(t, why, "go test -run")
	assert.Contains(t, why, "general: command failed (exit 1, general):")
	assert.Contains(t, why, "test-unit: --- FAIL: TestAdd: expected 4 got 5")
	assert.LessOrEqual(t, utf8.RuneCountInString(why), 250, why)
}

func TestLine(t *testing.T) {
	tests := []struct {
		name, text string
		n          int
		want       string
	}{
		{"one line", "CI failed on abc: ci", 300, "CI failed on abc: ci"},
		{"lines joined", "first\n\n  second  \nthird", 300, "first | second | third"},
		{"a quoted command dropped", "command \"make test\\nmake lint\" failed (exit 2, general):\nlint: 3 problems", 300,
			"command failed (exit 2, general): | lint: 3 problems"},
		{"a trace dropped", "+ make test\n$ make lint\n##[group]Run make\nboom", 300, "boom"},
		{"colours dropped", "\x1b[31mFAIL\x1b[0m TestAdd", 300, "FAIL TestAdd"},
		{"bounded", strings.Repeat("x", 400), 300, strings.Repeat("x", 299) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, breaker.Line(tt.text, tt.n))
		})
	}
}

func TestThresholdsOfAStage(t *testing.T) {
	cfg := settings.Defaults() // 2, 3, 3
	node := func(stage, sub *stages.CircuitBreaker) *stages.Node {
		n := &stages.Node{Path: "pr_ready", Stage: &stages.Stage{Name: "pr_ready", Settings: stages.Settings{CircuitBreaker: stage}}}
		if sub != nil {
			n.Path, n.Sub = "pr_ready.ci", &stages.Substage{Name: "ci", Stage: n.Stage, Settings: stages.Settings{CircuitBreaker: sub}}
		}
		return n
	}
	tests := []struct {
		name string
		node *stages.Node
		want stages.CircuitBreaker
	}{
		{"no node", nil, cfg.CircuitBreaker},
		{"a stage without its own", node(nil, nil), cfg.CircuitBreaker},
		{"the stage's own, key by key", node(&stages.CircuitBreaker{SameError: 5}, nil), stages.CircuitBreaker{HalfOpenAfter: 2, NoProgress: 3, SameError: 5}},
		{"all three", node(&stages.CircuitBreaker{HalfOpenAfter: 4, NoProgress: 6, SameError: 2}, nil), stages.CircuitBreaker{HalfOpenAfter: 4, NoProgress: 6, SameError: 2}},
		{"a substage's over its stage's", node(&stages.CircuitBreaker{NoProgress: 6, SameError: 5}, &stages.CircuitBreaker{SameError: 2}),
			stages.CircuitBreaker{HalfOpenAfter: 2, NoProgress: 6, SameError: 2}},
		{"the top level's half-open makes way for a lower threshold", node(&stages.CircuitBreaker{NoProgress: 1}, nil),
			stages.CircuitBreaker{HalfOpenAfter: 1, NoProgress: 1, SameError: 3}},
		{"the top level's threshold makes way for a later half-open", node(&stages.CircuitBreaker{HalfOpenAfter: 5}, nil),
			stages.CircuitBreaker{HalfOpenAfter: 5, NoProgress: 5, SameError: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, breaker.Thresholds(cfg, tt.node))
		})
	}
}

// A conflict is no verdict on the checks: after a failure of the checks it
// neither makes nor lacks progress, and the checks' failure after the
// rebase is the same failure again; conflicts among themselves count.
func TestConflictIsNoVerdictOnTheChecks(t *testing.T) {
	conflict := []breaker.Failure{fail("conflict", "PR #1 conflicts with main in CHANGES.md")}
	type move struct {
		head       string
		failing    []breaker.Failure
		state      string
		noProgress int
		sameError  int
	}
	tests := []struct {
		name  string
		moves []move
	}{
		{"a CI failure, then a conflict on the fix: no warning", []move{
			{"h1", unit(1), issues.BreakerClosed, 1, 1},
			{"h2", conflict, issues.BreakerClosed, 1, 1},
		}},
		{"the CI failure back after the rebase is the same failure again", []move{
			{"h1", unit(1), issues.BreakerClosed, 1, 1},
			{"h2", conflict, issues.BreakerClosed, 1, 1},
			{"h3", unit(3), issues.BreakerHalfOpen, 2, 2},
			{"h4", conflict, issues.BreakerHalfOpen, 2, 2},
			{"h5", unit(5), issues.BreakerOpen, 3, 3},
		}},
		{"a conflict after a conflict counts", []move{
			{"h1", unit(1), issues.BreakerClosed, 1, 1},
			{"h2", conflict, issues.BreakerClosed, 1, 1},
			{"h3", conflict, issues.BreakerHalfOpen, 2, 1},
			{"h4", conflict, issues.BreakerOpen, 3, 2},
		}},
		{"a conflict on the head the CI failure was counted on counts", []move{
			{"h1", unit(1), issues.BreakerClosed, 1, 1},
			{"h1", conflict, issues.BreakerHalfOpen, 2, 1},
		}},
		{"a first conflict is a first failure", []move{
			{"h1", conflict, issues.BreakerClosed, 1, 1},
			{"h2", conflict, issues.BreakerHalfOpen, 2, 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b issues.Breaker
			for i, m := range tt.moves {
				var open bool
				if m.failing[0].Check == "conflict" {
					b, open, _ = breaker.Conflict(b, m.head, m.failing, defaults)
				} else {
					b, open, _ = breaker.Record(b, m.head, m.failing, defaults)
				}
				require.Equal(t, m.state, b.State, "step %d: %+v", i+1, b)
				assert.Equal(t, m.noProgress, b.NoProgress, "step %d: no progress", i+1)
				assert.Equal(t, m.sameError, b.SameError, "step %d: same error", i+1)
				assert.Equal(t, m.state == issues.BreakerOpen, open, "step %d", i+1)
				assert.Equal(t, m.head, b.Head, "step %d", i+1)
				assert.Equal(t, []string{m.failing[0].Check}, b.Failing, "step %d: what failed last", i+1)
			}
		})
	}
}

// CI passing on a new head is a pass: the breaker closes and forgets, and
// what fails next on that head is the first failure since.
func TestCIPassedOnANewHeadIsProgress(t *testing.T) {
	b, _, _ := breaker.Record(issues.Breaker{}, "h1", unit(1), defaults)
	b, _, _ = breaker.Record(b, "h2", unit(2), defaults)
	require.Equal(t, issues.BreakerHalfOpen, b.State)

	assert.Equal(t, b, breaker.CIPassed(b, "h2"), "a pass on the head already counted is no progress")
	assert.Equal(t, b, breaker.CIPassed(b, ""), "a pass on no head says nothing")
	assert.Equal(t, breaker.Passed(), breaker.CIPassed(b, "h3"))
}
