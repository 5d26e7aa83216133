package builtin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/stages/load"
)

const canonicalConfig = `project: demo
default_branch: main
stages:
  - name: backlog
    parking_lot: true
  - name: implement
    substages:
      - name: code
        pre_completion:
          - title_set:
          - run: {command: make test, timeout: 5m, outputs: [coverage]}
          - run: make lint
            timeout: 60
            retries: 2
            context: lint
      - name: feedback
        pre_completion:
          - has_commits:
          - file_exists: review.md
          - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail_stage: code}
          - section_check: {file: review.md, section: Checklist, expect: all_checked}
          - checkbox_checked: {file: review.md, item: tests pass, optional: true}
          - field_check: {file: review.md, field: scores.overall, min: 7, max: 10.5}
          - min_words: {file: review.md, min: 50, section: Summary}
          - has_list_items: plan.md
          - contains: {file: review.md, text: APPROVED}
        post_completion:
          - rollback: {to: code, max_rollbacks: 2}
  - name: pr_ready
    host: controller
    pre_completion:
      - step_back: {to: implement.feedback, message: "coverage {{coverage}} is too low for {{issue_title}}"}
  - name: accepted
    terminal: completion
`

func TestBuiltinLoadsCanonicalConfig(t *testing.T) {
	cfg, err := load.Parse(".agenttree.yaml", []byte(canonicalConfig), Registry())
	require.NoError(t, err)
	assert.Empty(t, cfg.Warnings)

	code, ok := cfg.Node("implement.code")
	require.True(t, ok)
	_, pre := code.Leaving(nil)
	require.Len(t, pre, 3)
	assert.Equal(t, 5*time.Minute, pre[1].Params["timeout"])
	assert.Equal(t, []string{"coverage"}, pre[1].Params["outputs"])
	assert.Equal(t, "make lint", pre[2].Params["command"])
	assert.Equal(t, time.Minute, pre[2].Timeout, "a timeout beside the hook is the common option")

	feedback, _ := cfg.Node("implement.feedback")
	_, pre = feedback.Leaving(nil)
	require.Len(t, pre, 9)
	assert.Equal(t, "implement.code", pre[2].Params["on_fail"], "the alias is stored under the canonical name, resolved")
	assert.Equal(t, 10.5, pre[5].Params["max"])
	assert.Equal(t, "plan.md", pre[7].Params["file"])
	assert.Equal(t, "implement.code", feedback.Completed(nil)[0].Params["to"])
}

func TestBuiltinConfigErrors(t *testing.T) {
	tests := []struct {
		name  string
		hooks string
		want  []string
	}{
		{"unknown parameter", `{section_check: {file: review.md, sectoin: Summary}}`,
			[]string{"hook `section_check` has no parameter `sectoin`", "did you mean `section`?"}},
		{"unknown hook", `file_exist: review.md`, []string{"unknown hook `file_exist`", "did you mean `file_exists`?"}},
		{"missing required parameter", `{section_check: {file: review.md}}`, []string{"hook `section_check` needs parameter `section`"}},
		{"bad enum", `{section_check: {file: review.md, section: X, expect: emtpy}}`, []string{"must be one of empty, not_empty, all_checked", "did you mean `empty`?"}},
		{"bad stage reference", `{rollback: {to: implemnt.code}}`, []string{`rollback.to names unknown stage "implemnt.code"`}},
		{"no main parameter", `has_commits: yes`, []string{"hook `has_commits` takes no main parameter"}},
		{"unknown output in a message", `{step_back: {to: implement, message: "{{coverag}}"}}`, []string{"uses {{coverag}}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := hookstest.LoadEntry(Registry(), "pre_completion", tt.hooks)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
