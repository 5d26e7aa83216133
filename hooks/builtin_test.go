package hooks

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// TestEarlierSpellingsRun loads hooks written the earlier tool's way and
// runs them, so the loader's aliases reach the hooks under their names.
func TestEarlierSpellingsRun(t *testing.T) {
	doc := "## Checklist\n- [x] Approve\n\nVerdict: ok\nReviewed-by: sam\n\n```yaml\nscores:\n  average: 8\n```\n"
	tests := []struct {
		name   string
		hook   string
		kind   Kind
		target string
		reason string
	}{
		{"checkbox is item", `checkbox_checked: {file: r.md, checkbox: Approve}`, KindPass, "", ""},
		{"checkbox with on_fail", `checkbox_checked: {file: r.md, checkbox: Reject, on_fail: fix}`, KindRedirect, "work.fix", `no checkbox "Reject"`},
		{"path is field", `field_check: {file: r.md, path: scores.average, min: 7}`, KindPass, "", ""},
		{"path out of range", `field_check: {file: r.md, path: scores.average, min: 9}`, KindFail, "", "field scores.average is 8"},
		{"values all present", `contains: {file: r.md, values: [Verdict, Reviewed-by]}`, KindPass, "", ""},
		{"values one missing", `contains: {file: r.md, values: [Verdict, Signed-off-by]}`, KindFail, "", `does not contain "Signed-off-by"`},
		{"text", `contains: {file: r.md, text: "Verdict: ok"}`, KindPass, "", ""},
		{"must_pass false", `run: {command: "exit 1", must_pass: false, timeout: 900}`, KindPass, "", ""},
		{"must_pass true", `run: {command: "exit 1", must_pass: true}`, KindFail, "", `command "exit 1" failed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			yaml := "stages:\n  - name: work\n    substages:\n      - name: code\n        pre_completion:\n          - " + tt.hook +
				"\n      - name: fix\n"
			cfg, err := stages.Parse(".agenttree.yaml", []byte(yaml), Builtin())
			require.NoError(t, err)
			n, _ := cfg.Node("work.code")
			_, pre := n.Leaving(nil)
			require.Len(t, pre, 1)
			issue := newIssue(t)
			issue.WorkDir = issue.Dir
			writeFiles(t, issue.Dir, map[string]string{"r.md": doc})
			o := Builtin().Run(context.Background(), pre[0], issue, &Env{Config: cfg})
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Equal(t, tt.target, o.Target)
			assert.Contains(t, o.Reason, tt.reason)
		})
	}
}
