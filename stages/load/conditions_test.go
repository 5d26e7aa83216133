package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A gate skipped on a condition an agent decides is warned of; one on a
// var only a person sets is not.
func TestGateConditionsAgentsDecide(t *testing.T) {
	cfg, err := parseYAML(t, `agent_create: {vars: [trivial]}
stages:
  - name: implement
    pre_completion:
      - run: {command: "true", outputs: [small]}
  - name: pr_ready
    host: controller
    condition: not small
    post_start:
      - create_pr:
    on_failure: {step_back_to: implement}
  - name: review
    human_review: true
    condition: "{{ not trivial }}"
  - name: ui_review
    human_review: true
    condition: needs_ui_review
  - name: docs
    condition: not small
  - name: accepted
    terminal: completion
`)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/repo/.agenttree.yaml:8:16: warning: pr_ready (run by the host controller) is skipped when its condition `not small` is false, " +
			"and `small` is an output of a hook, worked out from what agents write: an agent could skip it " +
			"(base a gate's condition on a var a person sets: `agenttree issue create --set NAME=VALUE`)",
		"/repo/.agenttree.yaml:14:16: warning: review (a human review) is skipped when its condition `{{ not trivial }}` is false, " +
			"and `trivial` is a var agents may set when they create an issue (agent_create.vars): an agent could skip it " +
			"(base a gate's condition on a var a person sets: `agenttree issue create --set NAME=VALUE`)",
	}, diagStrings(cfg.Warnings), "ui_review reads a var only people set; docs is no gate")
}
