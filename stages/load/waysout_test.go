package load_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// A hook the controller runs whose failure neither steps the issue back
// nor calls a person is a warning, at the hook, in either form.
func TestFailuresThatLeadNowhere(t *testing.T) {
	const nowhere = "lead nowhere: add `on_failure: {step_back_to: STAGE}` to the stage or an `on_failure` to the hook (they escalate to a person)"
	tests := []struct {
		name string
		keys string // stage pr's, indented 8
		want []string
	}{
		{name: "no way out",
			keys: "        host: controller\n        post_start:\n          - create_pr:\n          - wait_for_ci: {timeout: 600}\n",
			want: []string{
				":9:13: warning: failures of `create_pr` in pr " + nowhere,
				":10:13: warning: failures of `wait_for_ci` in pr " + nowhere,
			}},
		{name: "the design notes' first variant, with the stage's step back only",
			keys: "        host: controller\n        post_start:\n          - create_pr:\n          - wait_for_ci:\n          - check_conflicts: {auto_rebase: true}\n" +
				"        pre_completion:\n          - pr_ci_passed:\n        on_failure:\n          step_back_to: implement.feedback\n"},
		{name: "a gate of the stage",
			keys: "        role: controller\n        pre_completion:\n          - pr_ci_passed:\n",
			want: []string{":9:13: warning: failures of `pr_ci_passed` in pr " + nowhere}},
		{name: "named by its context",
			keys: "        host: controller\n        post_start:\n          - run: make e2e\n            context: end-to-end tests\n",
			want: []string{":9:13: warning: failures of `end-to-end tests` in pr " + nowhere}},
		{name: "each hook's own way out",
			keys: "        host: controller\n        post_start:\n          - create_pr: {on_failure: escalate}\n" +
				"          - wait_for_ci: {on_failure: {step_back_to: implement.code}}\n          - check_conflicts: {on_failure: ignore}\n" +
				"          - rebase:\n            on_failure: [send_message: \"rebase failed\", escalate]\n"},
		{name: "optional hooks and hooks that move the issue themselves",
			keys: "        host: controller\n        post_start:\n          - run: {command: make lint, optional: true}\n" +
				"          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: implement.code}\n"},
		{name: "watching is not failing",
			keys: "        host: controller\n        post_start:\n          - poll_pr_status: {on_ci_failure: step_back}\n"},
		{name: "a bare step back goes to the nearest earlier stage where an agent works",
			keys: "        host: controller\n        post_start:\n          - wait_for_ci: {on_failure: step_back}\n"},
		{name: "failing on purpose",
			keys: "        host: controller\n        on_failure: {step_back_to: implement.feedback}\n        post_start:\n          - wait_for_ci: {on_failure: fail}\n",
			want: []string{":10:13: warning: failures of `wait_for_ci` in pr lead nowhere: its on_failure is `fail`; use `{step_back_to: STAGE}` or `escalate` " +
				"(the issue stops there until a person moves it)"}},
		{name: "hooks with no action",
			keys: "        host: controller\n        on_failure: {step_back_to: implement.feedback}\n        post_start:\n          - wait_for_ci:\n            on_failure: [send_message: \"CI failed\"]\n",
			want: []string{":10:13: warning: failures of `wait_for_ci` in pr lead nowhere: its on_failure list ends with no action, so the failure stands; " +
				"end it with `- step_back_to: STAGE` or `- escalate` (the issue stops there until a person moves it)"}},
		{name: "not a controller stage",
			keys: "        post_start:\n          - create_pr:\n          - wait_for_ci:\n"},
		{name: "a conflict policy is not a way out of other failures",
			keys: "        host: controller\n        post_start:\n          - check_conflicts: {on_conflict: step_back}\n",
			want: []string{":9:13: warning: failures of `check_conflicts` in pr other than a conflict (a git error, say; " +
				"a forge that cannot be reached is tried again) go to a person: `on_conflict` routes only conflicts; to route the others, " +
				"add `on_failure: {step_back_to: STAGE}` to the stage or an `on_failure` to the hook (`on_failure: escalate` to say a person takes them)"}},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(string(form)+"/"+tt.name, func(t *testing.T) {
				cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(withStagePR(form, tt.keys)), policyCatalog())
				require.NoError(t, err)
				want := make([]string, len(tt.want))
				for i, w := range tt.want {
					want[i] = "/repo/.agenttree.yaml" + w
				}
				assert.Equal(t, want, diagStrings(cfg.Warnings))
			})
		}
	}
}

// The step back of a failure is the node's own on_failure, else the
// nearest earlier one in the flow: the warning follows the same
// rule, flow by flow.
func TestFailuresLeadToAnEarlierStepBack(t *testing.T) {
	cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(`stages:
  - name: implement
    substages:
      - name: code
      - name: feedback
        on_failure: {step_back_to: code}
      - name: ci
        host: controller
        post_start:
          - wait_for_ci:
  - name: pr
    host: controller
    post_start:
      - create_pr:
flows:
  quick: [implement.ci, pr]
ci: {command: "true"}
`), policyCatalog())
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/repo/.agenttree.yaml:10:13: warning: failures of `wait_for_ci` in implement.ci (flow `quick`) " +
			"lead nowhere: add `on_failure: {step_back_to: STAGE}` to the stage or an `on_failure` to the hook (they escalate to a person)",
		"/repo/.agenttree.yaml:14:9: warning: failures of `create_pr` in pr (flow `quick`) " +
			"lead nowhere: add `on_failure: {step_back_to: STAGE}` to the stage or an `on_failure` to the hook (they escalate to a person)",
	}, diagStrings(cfg.Warnings), "in the default flow both step back to implement.code; in quick nothing comes before them")
}

// The design notes' second variant: a human review whose entry hooks the
// controller runs.
func TestHumanReviewRunByTheController(t *testing.T) {
	for _, form := range forms {
		cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(withStagePR(form,
			"        human_review: true\n        host: controller\n        post_start:\n          - create_pr:\n          - wait_for_ci:\n"+
				"        pre_completion:\n          - pr_approved:\n        on_failure: {step_back_to: implement.feedback, max_retries: 3}\n")), policyCatalog())
		require.NoError(t, err, form)
		assert.Empty(t, cfg.Warnings, form)
		n, ok := cfg.Node("pr")
		require.True(t, ok)
		assert.True(t, n.HumanReview(), form)
		assert.True(t, n.Controller(), form)
		assert.Len(t, n.Entering(nil), 2, form)
	}
}

// The pipelines other packages' tests share, and agenttree's own, load
// without a warning.
func TestSharedPipelinesLoad(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(filepath.Dir(testpipeline.Path(t, "cli")), "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	paths = append(paths, filepath.Join("..", "..", stages.FileName))
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := os.Stat(path)
			require.NoError(t, err)
			cfg, err := load.File(path, catalog())
			require.NoError(t, err)
			assert.Empty(t, diagStrings(cfg.Warnings))
		})
	}
}
