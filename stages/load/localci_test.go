package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages/load"
)

// The local forge with no ci.command passes every head untested: validate
// says so where a hook takes CI's verdict, and not once the command is
// there, nor on GitHub, whose CI is the repository's own.
func TestLocalForgeWithoutCIWarns(t *testing.T) {
	const pipeline = "stages:\n  - name: implement\n  - name: pr\n    host: controller\n    post_start:\n      - create_pr:\n      - wait_for_ci:\n" +
		"    on_failure: {step_back_to: implement}\n  - name: done\n    terminal: completion\n"
	tests := []struct {
		name, top string
		want      []string
	}{
		{"the default forge, no command", "", []string{"/repo/.agenttree.yaml:7:9: warning: `forge: local` has no `ci.command`: its CI runs nothing, and `wait_for_ci` in pr passes every head untested (its one check is skipped) (set the command that tests the code, e.g. `ci: {command: go test ./...}`)"}},
		{"forge: local with a command", "forge: local\nci: {command: make check}\n", nil},
		{"forge: github", "forge: github\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(pipeline+tt.top), policyCatalog())
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, diagStrings(cfg.Warnings))
		})
	}
}
