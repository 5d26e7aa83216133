package cmdutil

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
)

func TestResultCode(t *testing.T) {
	tests := []struct {
		res  engine.Result
		want exitcode.Code
	}{
		{engine.Result{Status: engine.StatusAdvanced}, exitcode.OK},
		{engine.Result{Status: engine.StatusFinal}, exitcode.OK},
		{engine.Result{Status: engine.StatusBlocked}, exitcode.Blocked},
		{engine.Result{Status: engine.StatusWaiting}, exitcode.Waiting},
		// Moved, but the new stage's entry work did not finish: not done.
		{engine.Result{Status: engine.StatusAdvanced, Unfinished: []string{"merge_pr: refused"}}, exitcode.Blocked},
		{engine.Result{Status: engine.StatusFinal, Unfinished: []string{"merge_pr: refused"}}, exitcode.Blocked},
		// Waiting wins: nothing the caller can fix now.
		{engine.Result{Status: engine.StatusWaiting, Unfinished: []string{"x"}}, exitcode.Waiting},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ResultCode(&tt.res), "%+v", tt.res)
	}
}
