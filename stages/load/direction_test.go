package load_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// directionPipeline is the reference pipeline with the hooks of a test in
// its review substage (indented 10 spaces), or in pr_ready's post_start
// for the controller's own hooks (prefix "pr_ready:").
func directionPipeline(review string) string {
	pr := "          - wait_for_ci:\n"
	if rest, ok := strings.CutPrefix(review, "pr_ready:"); ok {
		pr, review = rest, "          - file_exists: review.md\n"
	}
	return `stages:
  - name: backlog
    parking_lot: true
  - name: implement
    substages:
      - name: code
      - name: review
        pre_completion:
` + review + `      - name: fix
        redirect_only: true
  - name: pr_ready
    host: controller
    post_start:
` + pr + `  - name: implementation_review
    human_review: true
  - name: accepted
    terminal: completion
  - name: not_doing
    terminal: abandon
    redirect_only: true
`
}

// A failing hook is the one move an agent brings about at will, so no
// stage reference may carry an issue past the controller's stage, a human
// review or into a completion, and a step back goes back.
func TestMovesCannotSkipAGate(t *testing.T) {
	tests := []struct {
		name  string
		hooks string
		err   string // "" when the config loads
	}{
		{name: "a redirect back",
			hooks: "          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: code}\n"},
		{name: "a redirect to a fix stage after it",
			hooks: "          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: fix}\n"},
		{name: "a redirect to an end that abandons",
			hooks: "          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: not_doing}\n"},
		{name: "a step back to itself",
			hooks: "          - step_back: {to: implement.review}\n"},
		{name: "a redirect into the completion",
			hooks: "          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: accepted}\n",
			err: ":9:89: error: section_check.on_fail at implement.review sends issues straight to accepted, which completes them: " +
				"a failing hook would finish the work unchecked (send it to an earlier stage, or to one that abandons the issue)"},
		{name: "a redirect past the controller",
			hooks: "          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: implementation_review}\n",
			err: ":9:89: error: section_check.on_fail at implement.review sends issues forward to implementation_review, " +
				"past pr_ready (run by the host controller): a failing hook would skip it (send it to an earlier stage, or to pr_ready itself)"},
		{name: "a step back forward",
			hooks: "          - step_back: {to: pr_ready}\n",
			err:   ":9:29: error: step_back.to at implement.review goes forward to pr_ready: a step back must go to an earlier stage"},
		{name: "a rollback forward",
			hooks: "          - rollback: {to: implementation_review}\n",
			err:   "rollback.to at implement.review sends issues forward to implementation_review, past pr_ready (run by the host controller)"},
		{name: "a hook's on_failure forward",
			hooks: "          - file_exists: review.md\n            on_failure: {step_back_to: accepted}\n",
			err:   ":10:40: error: on_failure.step_back_to at implement.review sends issues straight to accepted"},
		{name: "the controller's on_failure forward",
			hooks: "pr_ready:          - wait_for_ci: {on_failure: {step_back_to: implementation_review}}\n",
			err:   "on_failure.step_back_to at pr_ready goes forward to implementation_review: a step back must go to an earlier stage"},
		{name: "the controller's redirect forward, past its own gates",
			hooks: "pr_ready:          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: implementation_review}\n",
			err: "section_check.on_fail at pr_ready (run by the host controller) sends issues forward to implementation_review: " +
				"a failing hook would move them on without the stage's own gates passing (send it to an earlier stage)"},
		{name: "the controller's redirect back",
			hooks: "pr_ready:          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: implement.code}\n"},
		{name: "a stage's on_failure forward",
			hooks: "          - file_exists: review.md\n        on_failure: {step_back_to: not_doing}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, directionPipeline(tt.hooks))
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Equal(t, 1, strings.Count(err.Error(), "error:"), "one error, however many flows hold the stage: %s", err)
		})
	}
}

// TestARedirectPastGatesNamesTheFirst checks which gate a forward redirect
// is said to skip: the first that `next` stops at, a review reached only by
// redirect being none.
func TestARedirectPastGatesNamesTheFirst(t *testing.T) {
	pipeline := func(target string) string {
		return `stages:
  - name: a
    pre_completion:
      - section_check: {file: r.md, section: X, on_fail: ` + target + `}
  - name: fix_review
    human_review: true
    redirect_only: true
  - name: review
    human_review: true
  - name: ship
    host: controller
  - name: after
  - name: done
    terminal: completion
`
	}
	_, err := parseYAML(t, pipeline("review"))
	require.NoError(t, err, "a review reached by redirect only is not skipped")
	_, err = parseYAML(t, pipeline("after"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), ":4:58: error: section_check.on_fail at a sends issues forward to after, past review (a human review)")
	assert.Equal(t, 1, strings.Count(err.Error(), "error:"), err.Error())
}
