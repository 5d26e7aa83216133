package stages_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestConditions(t *testing.T) {
	tests := []struct {
		src  string
		vars map[string]any
		want bool
	}{
		{"{{ needs_ui_review }}", map[string]any{"needs_ui_review": true}, true},
		{"{{ needs_ui_review }}", nil, false},
		{"not needs_ui_review", nil, true},
		{"size > 3 and lang == 'go'", map[string]any{"size": 5, "lang": "go"}, true},
		{"size > 3", nil, false},
		{"'ui' in labels", map[string]any{"labels": []string{"ui", "bug"}}, true},
		{"{{ a }} and {{ b }}", map[string]any{"a": true, "b": true}, true},
		{"{{ a }} and {{ b }}", map[string]any{"a": true}, false},
		{"{{ a }} and not {{ b }}", map[string]any{"a": true}, true},
		{"{{ a }} and not {{ b }}", map[string]any{"a": true, "b": true}, false},
		{"{{a}} or {{ b }}", map[string]any{"b": true}, true},
		{"not {{ a or b }}", map[string]any{"b": true}, false},
		{"{{ size }} > 3", map[string]any{"size": 5}, true},
	}
	for _, tt := range tests {
		c, err := stages.ParseCondition(tt.src)
		require.NoError(t, err, tt.src)
		got, _ := c.Eval(tt.vars)
		assert.Equal(t, tt.want, got, "%s with %v", tt.src, tt.vars)
	}
}
