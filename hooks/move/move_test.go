package move

import (
	"testing"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/stretchr/testify/assert"
)

func TestStepBack(t *testing.T) {
	issue := &hooks.Issue{ID: 42, Title: "Fix login", Stage: "pr_ready", Outputs: map[string]string{"failed_checks": "lint, test"}}
	tests := []struct {
		name    string
		params  hooks.Params
		message string
	}{
		{"rendered message", hooks.Params{"to": "implement.feedback", "message": "#{{issue_id}} {{ issue_title }}: {{failed_checks}} failed{{nope}}"},
			"#42 Fix login: lint, test failed"},
		{"default message", hooks.Params{"to": "implement.feedback"}, "stepped back from pr_ready to implement.feedback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := hookstest.Call(t, registry(), "step_back", issue, tt.params, nil)
			assert.Equal(t, hooks.KindStepBack, o.Kind)
			assert.Equal(t, "implement.feedback", o.Target)
			assert.Equal(t, tt.message, o.Message)
		})
	}
}

func TestRollback(t *testing.T) {
	rb := func(to string) hooks.Event { return hooks.Event{Kind: "rollback", To: to} }
	history := []hooks.Event{
		{Kind: "advance", To: "implement.code"},
		rb("implement.code"),
		{Kind: "step_back", To: "implement.code"},
		rb("implement.plan"),
		rb("implement.code"),
	}
	tests := []struct {
		name    string
		history []hooks.Event
		max     any // nil: not set
		kind    hooks.Kind
		reason  string
	}{
		{"first, unlimited", nil, nil, hooks.KindRollback, "rollback 1 to implement.code"},
		{"third, unlimited", history, nil, hooks.KindRollback, "rollback 3 to implement.code"},
		{"zero means unlimited", history, 0, hooks.KindRollback, "rollback 3 to implement.code"},
		{"within budget", history, 3, hooks.KindRollback, "rollback 3 of 3 to implement.code"},
		{"budget spent", history, 2, hooks.KindFail,
			"rollback to implement.code has already happened 2 times (max_rollbacks: 2); the loop is not converging, so a human should decide"},
		{"only rollbacks to the same target count", history[:4], 2, hooks.KindRollback, "rollback 2 of 2 to implement.code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := hooks.Params{"to": "implement.code"}
			if tt.max != nil {
				params["max_rollbacks"] = tt.max
			}
			o := hookstest.Call(t, registry(), "rollback", &hooks.Issue{History: tt.history}, params, nil)
			assert.Equal(t, tt.kind, o.Kind)
			assert.Contains(t, o.Reason, tt.reason)
			if tt.kind == hooks.KindRollback {
				assert.Equal(t, "implement.code", o.Target)
			}
		})
	}
}

// registry holds the hooks of this package, as the tests call them.
func registry() *hooks.Registry { return hooks.NewRegistry(Defs()...) }
