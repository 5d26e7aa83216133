package message

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
)

func registry() *hooks.Registry { return hooks.NewRegistry(Defs()...) }

func TestSendMessage(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		send    []string
		warning string
	}{
		{name: "issue variables and outputs", text: "CI failed on #{{issue_id}} ({{ issue_title }}): {{failure_reason}}",
			send: []string{"CI failed on #7 (Add login): test-unit failed"}},
		{name: "unknown placeholders are empty", text: "see {{nope}}ci_feedback.md", send: []string{"see ci_feedback.md"}},
		{name: "surrounding blanks trimmed", text: "\n  fix it  \n", send: []string{"fix it"}},
		{name: "blank once rendered", text: " {{conflict_files}} ", warning: `" {{conflict_files}} " is empty once its placeholders are filled`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issue := hookstest.NewIssue(t)
			issue.Outputs = map[string]string{"failure_reason": "test-unit failed", "conflict_files": ""}
			o := hookstest.Call(t, registry(), "send_message", issue, hooks.Params{"text": tt.text}, nil)
			assert.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, tt.send, o.Send)
			if tt.warning == "" {
				assert.Empty(t, o.Warnings)
				return
			}
			require.Len(t, o.Warnings, 1)
			assert.Contains(t, o.Warnings[0], tt.warning)
		})
	}
}

// The scalar form sets the text: `send_message: "..."`.
func TestSendMessageLoads(t *testing.T) {
	r := registry()
	entry, cfg, err := hookstest.LoadEntry(r, "post_start", `send_message: "Please look at {{issue_title}}"`)
	require.NoError(t, err)
	assert.Equal(t, hooks.Params{"text": "Please look at {{issue_title}}"}, hooks.Params(entry.Params))

	o := r.Run(context.Background(), entry, hookstest.NewIssue(t), &hooks.Env{Config: cfg})
	require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, []string{"Please look at Add login"}, o.Send)

	_, _, err = hookstest.LoadEntry(r, "post_start", `send_message:`)
	assert.ErrorContains(t, err, "needs parameter `text`")
}
