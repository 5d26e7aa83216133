package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a new user writes wrong in a hook's parameters gets one error that
// says what to write.
func TestHookParameterMistakes(t *testing.T) {
	tests := []struct {
		name, hook string
		want       string
	}{
		{"a required parameter misnamed", "file_exists: {path: review.md}",
			":4:23: error: hook `file_exists` has no parameter `path` (did you mean `file`? the hook needs it)"},
		{"a short form the hook does not have", "contains: a.md",
			":4:19: error: hook `contains` takes no main parameter (name its parameters: `contains: {file: ..., text or values: ...}`)"},
		{"a count below zero", "has_list_items: {file: r.md, min: -2}",
			":4:43: error: hook `has_list_items` parameter `min` must be at least 0, got -2 (use 0 or more)"},
		{"reruns below zero", "wait_for_ci: {rerun_failed: -1}",
			":4:37: error: hook `wait_for_ci` parameter `rerun_failed` must be at least 0, got -1 (use 0 or more)"},
		{"a rollback budget below zero", "rollback: {to: a, max_rollbacks: -1}",
			":4:42: error: hook `rollback` parameter `max_rollbacks` must be at least 0, got -1 (use 0 or more)"},
		{"a file to create in a subdirectory", "create_file: {dest: notes/x.md, content: hi}",
			":4:9: error: hook `create_file` parameter `dest`: \"notes/x.md\" names a subdirectory; give a plain file name, such as x.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, "stages:\n  - name: a\n    pre_completion:\n      - "+tt.hook+"\n  - name: done\n    terminal: completion\n")
			require.Error(t, err)
			assert.Equal(t, []string{"/repo/.agenttree.yaml" + tt.want}, errorStrings(t, err))
		})
	}
}
