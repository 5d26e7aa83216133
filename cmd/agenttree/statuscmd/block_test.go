package statuscmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func TestStatusBudgets(t *testing.T) {
	config := strings.Replace(testpipeline.Read(t, "controller"), `message: "{{failure_reason}}"`,
		"message: \"{{failure_reason}}\"\n      max_retries: 6", 1)
	require.Contains(t, config, "max_retries: 6")
	cfg, err := load.Parse("test.yaml", []byte(config), cmdutil.HookRegistry())
	require.NoError(t, err)
	back := issues.HistoryEntry{From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack}
	tests := []struct {
		name string
		iss  issues.Issue
		want []BudgetUse
	}{
		{
			name: "the config's budgets at a stage without its own",
			iss:  issues.Issue{Stage: "implement.code"},
			want: []BudgetUse{{Kind: "ci_failed", Used: 0, Max: 3}, {Kind: "no_new_ci", Used: 0, Max: 2}, {Kind: "polling_timeout", Used: 0, Max: 2}, {Kind: "ci_cancelled", Used: 0, Max: 2}, {Kind: "conflict", Used: 0, Max: 3}},
		},
		{
			name: "the budget of the stage the last step back came from",
			iss:  issues.Issue{Stage: "implement.feedback", History: []issues.HistoryEntry{back}, Attempts: map[string]int{"ci_failed": 2}},
			want: []BudgetUse{{Kind: "ci_failed", Used: 2, Max: 6}, {Kind: "no_new_ci", Used: 0, Max: 6}, {Kind: "polling_timeout", Used: 0, Max: 6}, {Kind: "ci_cancelled", Used: 0, Max: 6}, {Kind: "conflict", Used: 0, Max: 6}},
		},
		{
			name: "the budget of the stage it escalated at, other kinds after",
			iss: issues.Issue{Stage: "implement.code", Escalated: &issues.Escalation{Stage: "pr_ready"},
				Attempts: map[string]int{"conflict": 6, "timeout": 1}},
			want: []BudgetUse{{Kind: "ci_failed", Used: 0, Max: 6}, {Kind: "no_new_ci", Used: 0, Max: 6}, {Kind: "polling_timeout", Used: 0, Max: 6}, {Kind: "ci_cancelled", Used: 0, Max: 6}, {Kind: "conflict", Used: 6, Max: 6}, {Kind: "timeout", Used: 1, Max: 6}},
		},
		{
			name: "the budget the failure that escalated found spent, never above it",
			iss: issues.Issue{Stage: "pr_ready", Escalated: &issues.Escalation{Stage: "pr_ready", Kind: issues.EscalatedBudget},
				Outputs: map[string]string{notice.OutClass: "ci_failed"}, Attempts: map[string]int{"ci_failed": 6, "conflict": 1}},
			want: []BudgetUse{{Kind: "ci_failed", Used: 6, Max: 6, Escalated: true}, {Kind: "no_new_ci", Max: 6}, {Kind: "polling_timeout", Max: 6},
				{Kind: "ci_cancelled", Max: 6}, {Kind: "conflict", Used: 1, Max: 6}},
		},
		{
			name: "an issue escalated when the escalating failure counted as a step back",
			iss: issues.Issue{Stage: "pr_ready", Escalated: &issues.Escalation{Stage: "pr_ready", Kind: issues.EscalatedBudget},
				Attempts: map[string]int{"ci_failed": 7}},
			want: []BudgetUse{{Kind: "ci_failed", Used: 6, Max: 6, Escalated: true}, {Kind: "no_new_ci", Max: 6}, {Kind: "polling_timeout", Max: 6},
				{Kind: "ci_cancelled", Max: 6}, {Kind: "conflict", Max: 6}},
		},
		{
			name: "the breaker, not a budget, escalated",
			iss: issues.Issue{Stage: "pr_ready", Escalated: &issues.Escalation{Stage: "pr_ready", Kind: issues.EscalatedBreaker},
				Outputs: map[string]string{notice.OutClass: "ci_failed"}, Attempts: map[string]int{"ci_failed": 2}},
			want: []BudgetUse{{Kind: "ci_failed", Used: 2, Max: 6}, {Kind: "no_new_ci", Max: 6}, {Kind: "polling_timeout", Max: 6},
				{Kind: "ci_cancelled", Max: 6}, {Kind: "conflict", Max: 6}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, budgets(cfg, &tt.iss))
		})
	}
}

func TestBudgetsText(t *testing.T) {
	assert.Equal(t, "ci_failed 2/2 (then failed again: escalated), conflict 0/3",
		budgetsText([]BudgetUse{{Kind: "ci_failed", Used: 2, Max: 2, Escalated: true}, {Kind: "conflict", Max: 3}}))
}

func TestBreakerWarningOnlyWhileHalfOpen(t *testing.T) {
	cfg, err := load.Parse("test.yaml", []byte(testpipeline.Read(t, "controller")), cmdutil.HookRegistry())
	require.NoError(t, err)
	half := &issues.Breaker{State: issues.BreakerHalfOpen, NoProgress: 2, SameError: 1}
	iss := issues.Issue{Stage: "implement.feedback", Breaker: half,
		History: []issues.HistoryEntry{{From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack}}}
	assert.Contains(t, breakerWarning(cfg, &iss), "circuit breaker half-open: 2 failures without progress;")
	assert.Contains(t, breakerWarning(cfg, &iss), "a pass, or a new commit on which fewer checks (or lines of a check) fail, closes it")

	iss.Breaker = &issues.Breaker{State: issues.BreakerClosed, NoProgress: 1}
	assert.Empty(t, breakerWarning(cfg, &iss))
	iss.Breaker, iss.Escalated = half, &issues.Escalation{Kind: issues.EscalatedHook}
	assert.Empty(t, breakerWarning(cfg, &iss), "an escalated issue waits on a person already")
}
