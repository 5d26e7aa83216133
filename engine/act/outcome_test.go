package act_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/act"
)

func TestFinishSaysWhetherTheIssueMoved(t *testing.T) {
	tests := []struct {
		status  act.Status
		from    string
		to      string
		moved   bool
		summary string
	}{
		{act.StatusAdvanced, "plan.draft", "plan.review", true, "moved plan.draft → plan.review"},
		{act.StatusFinal, "accepted", "accepted", false, "final"},
		{act.StatusBlocked, "plan.draft", "plan.review", false, "blocked"},
		{act.StatusWaiting, "plan.draft", "plan.review", false, "waiting"},
		// A retried request is told the move it made before; nothing
		// moved this time.
		{act.StatusDone, "plan.draft", "plan.review", false, "already done before: plan.draft → plan.review"},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			res, err := act.Finish(&act.Result{Issue: 1, From: tt.from, To: tt.to, Status: tt.status, Reasons: []string{}, Version: 4}, nil)
			require.NoError(t, err)
			o := res.Outcome
			assert.Equal(t, tt.moved, o.Moved)
			assert.Equal(t, tt.summary, o.Summary)
			assert.Equal(t, tt.status, o.Status)
			assert.Equal(t, 4, o.Version)
		})
	}
}
