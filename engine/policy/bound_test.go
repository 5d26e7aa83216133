package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/breaker"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
)

func TestBudgetOfAKindOfFailure(t *testing.T) {
	cfg := settings.Defaults()
	plain := &stages.Node{Path: "pr_ready", Stage: &stages.Stage{Name: "pr_ready"}}
	own := &stages.Node{Path: "review", Stage: &stages.Stage{Name: "review", Settings: stages.Settings{OnFailure: &stages.OnFailure{MaxRetries: 7}}}}
	assert.Equal(t, cfg.CIPolling.MaxRetries, policy.Budget(cfg, plain, hooks.ClassCIFailed))
	assert.Equal(t, cfg.Conflicts.MaxConflictRetries, policy.Budget(cfg, plain, hooks.ClassConflict))
	assert.Equal(t, 7, policy.Budget(cfg, own, hooks.ClassConflict), "the stage's own max_retries wins")
	for _, class := range []hooks.Class{hooks.ClassNoNewCI, hooks.ClassPollingTimeout, hooks.ClassCICancelled, hooks.ClassCIEnvironment} {
		assert.Equal(t, policy.StalledRetries, policy.Budget(cfg, plain, class), "CI with no verdict is no CI failure: %s", class)
		assert.Equal(t, 7, policy.Budget(cfg, own, class), "the stage's own max_retries wins: %s", class)
	}
	assert.Less(t, policy.StalledRetries, cfg.CIPolling.MaxRetries, "the agent cannot fix a stalled CI: a person is called sooner")
}

func TestFailureOfAStepBack(t *testing.T) {
	snap := &hooks.Issue{HeadSHA: "aaa"}
	for _, tt := range []struct {
		name string
		o    hooks.Outcome
		want []breaker.Failure
	}{
		{"how each check failed", hooks.Outcome{Kind: hooks.KindStepBack, Class: hooks.ClassCIFailed, Reason: "CI failed",
			Outputs: map[string]string{"failure_details": "unit\tFAIL TestA\nlint\tgofmt", "failed_checks": "unit, lint"}},
			[]breaker.Failure{{Check: "unit", Detail: "FAIL TestA"}, {Check: "lint", Detail: "gofmt"}}},
		{"the lines of each check's failure", hooks.Outcome{Kind: hooks.KindStepBack, Class: hooks.ClassCIFailed, Reason: "CI failed",
			Outputs: map[string]string{"failure_details": "ci\tFAIL TestA | FAIL TestB | exit 1"}},
			[]breaker.Failure{{Check: "ci", Detail: "FAIL TestA\nFAIL TestB\nexit 1"}}},
		{"only the names", hooks.Outcome{Kind: hooks.KindStepBack, Class: hooks.ClassCIFailed, Reason: "CI failed",
			Outputs: map[string]string{"failed_checks": "unit"}},
			[]breaker.Failure{{Check: "unit", Detail: "CI failed"}}},
		{"a conflict", hooks.Outcome{Kind: hooks.KindStepBack, Class: hooks.ClassConflict, Reason: "conflicts in a.go"},
			[]breaker.Failure{{Check: "conflict", Detail: "conflicts in a.go"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := policy.FailureOf(tt.o, snap)
			require.NotNil(t, f)
			assert.Equal(t, tt.want, f.Failing)
			assert.Equal(t, "aaa", f.Head)
		})
	}
	assert.Nil(t, policy.FailureOf(hooks.StepBack("a", "on purpose"), snap), "a step back asked for on purpose is no failure")
	assert.Nil(t, policy.FailureOf(hooks.FailAs(hooks.ClassCIFailed, "x"), snap), "only a step back counts")
}

func TestCountKeepsTheFailureWithTheMove(t *testing.T) {
	iss := &issues.Issue{Outputs: map[string]string{notice.OutFeedback: "old.md"}}
	f := &policy.Failure{Class: hooks.ClassConflict, Head: "aaa", Failing: []breaker.Failure{{Check: "conflict", Detail: "a.go"}}}
	policy.Count(iss, f, settings.Defaults(), "pr_ready")
	assert.Equal(t, 1, iss.Attempts["conflict"])
	assert.Equal(t, "conflict", iss.Outputs[notice.OutClass])
	assert.NotContains(t, iss.Outputs, notice.OutFeedback, "an earlier failure's document is not this one's")
	require.NotNil(t, iss.Breaker)
	assert.Equal(t, 1, iss.Breaker.NoProgress)
}

// The failure that escalates is counted by the breaker, which opened on
// it, but spends no budget: the budget counts step backs.
func TestCountEscalationSpendsNoBudget(t *testing.T) {
	iss := &issues.Issue{Attempts: map[string]int{"ci_failed": 2}}
	f := &policy.Failure{Class: hooks.ClassCIFailed, Head: "aaa", Failing: []breaker.Failure{{Check: "ci", Detail: "FAIL TestA"}}}
	policy.CountEscalation(iss, f, settings.Defaults(), "pr_ready")
	assert.Equal(t, 2, iss.Attempts["ci_failed"])
	assert.Equal(t, "ci_failed", iss.Outputs[notice.OutClass])
	require.NotNil(t, iss.Breaker)
	assert.Equal(t, 1, iss.Breaker.NoProgress)
}

func TestPassedClosesTheBreakerOnlyLeavingAControllerStage(t *testing.T) {
	open := &issues.Breaker{State: issues.BreakerOpen, NoProgress: 3, Fewest: []string{"ci\tboom"}}
	controller := &stages.Node{Path: "pr_ready", Stage: &stages.Stage{Name: "pr_ready", Settings: stages.Settings{Role: stages.RoleController}}}
	agent := &stages.Node{Path: "implement", Stage: &stages.Stage{Name: "implement"}}

	iss := &issues.Issue{Breaker: open}
	policy.Passed(iss, agent)
	assert.Same(t, open, iss.Breaker, "an agent's own `next` passes nothing the breaker counted")
	policy.Passed(iss, controller)
	assert.Equal(t, &issues.Breaker{State: issues.BreakerClosed}, iss.Breaker)
}

// A CI failure fixed, then a conflict with a colleague's change: progress,
// not a second failure without progress (no half-open warning), whether
// CI passed on the new head before the conflict was found or never ran.
func TestACIFailureFixedThenAConflictIsNoFalseAlarm(t *testing.T) {
	ciFailed := hooks.Outcome{Kind: hooks.KindStepBack, Class: hooks.ClassCIFailed, Reason: "CI failed on aaa",
		Outputs: map[string]string{"head_sha": "aaa", "failure_details": "ci\tFAIL TestCheckout"}}
	conflict := hooks.Outcome{Kind: hooks.KindStepBack, Class: hooks.ClassConflict, Reason: "PR #1 conflicts with main in CHANGES.md",
		Outputs: map[string]string{"conflict_files": "CHANGES.md"}}
	for _, tt := range []struct {
		name     string
		outputs  map[string]string // the outputs of the hooks before the conflict, on bbb
		ciPassed bool
		fewest   []string
	}{
		{"CI passed on the new head", map[string]string{stages.CIPassedSHA: "bbb"}, true,
			[]string{"conflict\tpr #<n> conflicts with main in changes.md"}},
		{"CI never ran on the new head", nil, false, []string{"ci\tfail testcheckout"}},
		{"CI passed on an older head", map[string]string{stages.CIPassedSHA: "000"}, false, []string{"ci\tfail testcheckout"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iss := &issues.Issue{}
			cfg := settings.Defaults()
			policy.Count(iss, policy.FailureOf(ciFailed, &hooks.Issue{HeadSHA: "aaa"}), cfg, "pr_ready")
			f := policy.FailureOf(conflict, &hooks.Issue{HeadSHA: "bbb", Outputs: tt.outputs})
			require.NotNil(t, f)
			assert.Equal(t, tt.ciPassed, f.CIPassed)
			policy.Count(iss, f, cfg, "pr_ready")
			require.NotNil(t, iss.Breaker)
			assert.Equal(t, issues.BreakerClosed, iss.Breaker.State, "%+v", iss.Breaker)
			assert.Equal(t, 1, iss.Breaker.NoProgress)
			assert.Equal(t, []string{"conflict"}, iss.Breaker.Failing)
			assert.Equal(t, "bbb", iss.Breaker.Head)
			assert.Equal(t, tt.fewest, iss.Breaker.Fewest)
		})
	}
}

// A pass of CI before a failure of CI on the same head was overruled, not
// made: it is no progress.
func TestCIPassedIsNotCountedForCIsOwnFailure(t *testing.T) {
	snap := &hooks.Issue{HeadSHA: "aaa", Outputs: map[string]string{stages.CIPassedSHA: "aaa"}}
	f := policy.FailureOf(hooks.Outcome{Kind: hooks.KindStepBack, Class: hooks.ClassCIFailed, Reason: "CI failed"}, snap)
	require.NotNil(t, f)
	assert.False(t, f.CIPassed)
}
