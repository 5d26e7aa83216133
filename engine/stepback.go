package engine

import (
	"path/filepath"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
)

// stepBackOf describes the step back h, just written to cur.
func (t *transition) stepBackOf(cur *issues.Issue, h hop) *StepBack {
	sb := &StepBack{From: h.from.Path, To: h.to.Path, Reason: h.reason, Message: h.reason}
	if f := h.failure; f != nil {
		sb.Reason, sb.Class, sb.Checks = f.Reason, string(f.Class), f.Checks()
		sb.Attempt, sb.MaxRetries = cur.Attempts[string(f.Class)], policy.Budget(t.e.Config, h.from, f.Class)
		if f.Feedback != "" {
			sb.Feedback = filepath.Join(t.e.Store.Dir(cur.ID), f.Feedback)
		}
	}
	return sb
}
