package pr

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
)

// poll_pr_status never blocks, with a PR or without one, a forge or none:
// it asks the controller to watch, every how often.
func TestPollPRStatus(t *testing.T) {
	tests := []struct {
		name     string
		env      *hooks.Env
		params   map[string]any
		interval string
	}{
		{name: "the config's poll interval", env: &hooks.Env{Config: prConfig()}, interval: "30s"},
		{name: "its own interval", env: &hooks.Env{Config: prConfig()}, params: map[string]any{"interval": 2 * time.Minute}, interval: "2m0s"},
		{name: "no config", interval: "30s"},
		{name: "policies are the engine's", env: &hooks.Env{Config: prConfig()},
			params: map[string]any{"on_ci_failure": "escalate", "on_conflict": map[string]any{"step_back_to": "implement.code"}}, interval: "30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issue := &hooks.Issue{ID: 7, Stage: "implementation_review", Outputs: map[string]string{}}
			o := runHook(t, tt.env, issue, "poll_pr_status", tt.params)
			require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, map[string]string{"watch_pr": "true", "watch_interval": tt.interval}, o.Outputs)
			assert.Empty(t, o.Send)
		})
	}
}
