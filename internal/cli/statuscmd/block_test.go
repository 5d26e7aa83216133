package statuscmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/cli/cmdutil"
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
			want: []BudgetUse{{"ci_failed", 0, 3}, {"no_new_ci", 0, 2}, {"polling_timeout", 0, 2}, {"ci_cancelled", 0, 2}, {"conflict", 0, 3}},
		},
		{
			name: "the budget of the stage the last step back came from",
			iss:  issues.Issue{Stage: "implement.feedback", History: []issues.HistoryEntry{back}, Attempts: map[string]int{"ci_failed": 2}},
			want: []BudgetUse{{"ci_failed", 2, 6}, {"no_new_ci", 0, 6}, {"polling_timeout", 0, 6}, {"ci_cancelled", 0, 6}, {"conflict", 0, 6}},
		},
		{
			name: "the budget of the stage it escalated at, other kinds after",
			iss: issues.Issue{Stage: "implement.code", Escalated: &issues.Escalation{Stage: "pr_ready"},
				Attempts: map[string]int{"conflict": 6, "timeout": 1}},
			want: []BudgetUse{{"ci_failed", 0, 6}, {"no_new_ci", 0, 6}, {"polling_timeout", 0, 6}, {"ci_cancelled", 0, 6}, {"conflict", 6, 6}, {"timeout", 1, 6}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, budgets(cfg, &tt.iss))
		})
	}
}
