package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEarlierSpellingsRun loads hooks written the earlier tool's way and
// runs them, so the loader's aliases reach the hooks under their names.
func TestEarlierSpellingsRun(t *testing.T) {
	doc := "## Checklist\n- [x] Approve\n\nVerdict: ok\nReviewed-by: sam\n\n```yaml\nscores:\n  average: 8\n```\n"
	tests := []struct {
		name   string
		hook   string
		kind   hooks.Kind
		target string
		reason string
	}{
		{"checkbox is item", `checkbox_checked: {file: r.md, checkbox: Approve}`, hooks.KindPass, "", ""},
		{"checkbox with on_fail", `checkbox_checked: {file: r.md, checkbox: Reject, on_fail: fix}`, hooks.KindRedirect, "implement.fix", `no checkbox "Reject"`},
		{"path is field", `field_check: {file: r.md, path: scores.average, min: 7}`, hooks.KindPass, "", ""},
		{"path out of range", `field_check: {file: r.md, path: scores.average, min: 9}`, hooks.KindFail, "", "field scores.average is 8"},
		{"values all present", `contains: {file: r.md, values: [Verdict, Reviewed-by]}`, hooks.KindPass, "", ""},
		{"values one missing", `contains: {file: r.md, values: [Verdict, Signed-off-by]}`, hooks.KindFail, "", `does not contain "Signed-off-by"`},
		{"text", `contains: {file: r.md, text: "Verdict: ok"}`, hooks.KindPass, "", ""},
		{"must_pass false", `run: {command: "exit 1", must_pass: false, timeout: 900}`, hooks.KindPass, "", ""},
		{"must_pass true", `run: {command: "exit 1", must_pass: true}`, hooks.KindFail, "", `command "exit 1" failed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			entry, cfg, err := hookstest.LoadEntry(Registry(), "pre_completion", tt.hook)
			require.NoError(t, err)
			issue := hookstest.NewIssue(t)
			issue.WorkDir = issue.Dir
			hookstest.WriteFiles(t, issue.Dir, map[string]string{"r.md": doc})
			o := Registry().Run(context.Background(), entry, issue, &hooks.Env{Config: cfg})
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Equal(t, tt.target, o.Target)
			assert.Contains(t, o.Reason, tt.reason)
		})
	}
}

// poll_pr_status loads with its policies in the forms of on_failure, and
// runs without blocking.
func TestPollPRStatusLoads(t *testing.T) {
	for _, hook := range []string{
		`poll_pr_status:`,
		`poll_pr_status: {interval: 60, on_ci_failure: escalate, on_conflict: {step_back_to: fix}}`,
	} {
		t.Run(hook, func(t *testing.T) {
			entry, cfg, err := hookstest.LoadEntry(Registry(), "post_start", hook)
			require.NoError(t, err)
			o := Registry().Run(context.Background(), entry, hookstest.NewIssue(t), &hooks.Env{Config: cfg})
			require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, "true", o.Outputs["watch_pr"])
		})
	}
}

// A hook's outputs never pose as another hook's facts: a `run` command
// printing the PR's number or an approval as JSON sets neither, while
// outputs of its own go through.
func TestRunCannotSetAnotherHooksOutputs(t *testing.T) {
	issue := hookstest.NewIssue(t)
	o := hookstest.Call(t, Registry(), "run", issue,
		hooks.Params{"command": `echo '{"pr_number": "99", "approved_sha": "abc", "ci_passed_sha": "abc", "coverage": "81"}'`}, nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, "81", o.Outputs["coverage"])
	for _, k := range []string{"pr_number", "approved_sha", "ci_passed_sha"} {
		assert.NotContains(t, o.Outputs, k)
	}
	assert.Contains(t, strings.Join(o.Warnings, "\n"), `run may not set output "approved_sha": it is pr_approved's`)
}
