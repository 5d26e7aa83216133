package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// More bad configs: each exits 2 with file:line:col and writes nothing.
func TestMoreBadConfigsAreRejected(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"duplicate stage", "stages:\n  - name: a\n  - name: a\n", `:3:5: error: duplicate stage "a"`},
		{"duplicate substage", "stages:\n  - name: a\n    substages: [x, x]\n", `duplicate substage "x"`},
		{"duplicate key", "stages:\n  - name: a\n    pre_completion: []\n    pre_completion: []\n", "duplicate key `pre_completion`"},
		{"on_fail target", "stages:\n  - name: a\n    pre_completion:\n      - section_check: {file: r.md, section: X, on_fail: nowhere}\n", `names unknown stage "nowhere"`},
		{"rollback target", "stages:\n  - name: a\n    post_completion:\n      - rollback: {to: b}\n", `rollback.to names unknown stage "b"`},
		{"only parking lots", "stages:\n  - name: backlog\n    parking_lot: true\n", "has only parking-lot stages"},
		{"bad parameter type", "stages:\n  - name: a\n    pre_completion:\n      - min_words: {file: r.md, min: ten}\n", "expected a whole number"},
		{"redirect out of the flow", "stages:\n  - name: a\n    substages:\n      - name: fix\n      - name: review\n        pre_completion:\n          - section_check: {file: r.md, section: X, on_fail: fix}\n  - name: done\nflows:\n  quick: [a.review, done]\n", "does not include"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tt.config)
			for _, args := range [][]string{{"validate"}, {"issue", "create", "x"}, {"next", "-i", "1"}, {"stages", "--json"}} {
				r := w.run(t, humanEnv, args...)
				assert.Equal(t, 2, r.code, "%v: %s", args, r.stdout)
				assert.Contains(t, r.stderr, tt.want, "%v", args)
				assert.Regexp(t, `\.agenttree\.yaml:\d+:\d+: error:`, r.stderr)
			}
			_, err := os.Stat(filepath.Join(w.dir, "_agenttree"))
			assert.True(t, os.IsNotExist(err), "nothing written")
		})
	}
}
