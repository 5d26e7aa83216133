package load_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// The merge's guards as the loader sees them: a flow that merges with no
// person's review before it is a warning unless the config says it is
// meant (`require_review: false`), which validate then lists; a merge
// that runs before a person approves at the only review, and a flow that
// records no CI verdict, are warnings too, since the merge is refused
// there. A review without hooks is no warning: a person's approval there
// is recorded.
func TestMergesTheConfigDoesNotGuardAsItSeems(t *testing.T) {
	const (
		pr = "  - name: pr_ready\n    host: controller\n    post_start:\n      - create_pr:\n      - wait_for_ci:\n" +
			"    pre_completion:\n      - pr_ci_passed:\n    on_failure: {step_back_to: implement}\n"
		review   = "  - name: review\n    human_review: true\n    pre_completion:\n      - pr_approved:\n"
		accepted = "  - name: accepted\n    terminal: completion\n    post_start:\n      - merge_pr:%s\n"
	)
	unreviewed := "/repo/.agenttree.yaml:%d:9: warning: `merge_pr` in accepted merges the PRs of %s with no person's review before it: " +
		"what passes CI is merged, unreviewed (if that is meant, say so: `merge_pr: {require_review: false}`; else put a human review (`human_review: true`) before accepted in the flow)"
	tests := []struct {
		name   string
		stages string
		merge  string // merge_pr's parameters
		last   string // the stage after them, if not accepted with merge_pr
		flows  string
		want   []string // warnings, %d the merge's line
		// unreviewed are the flows validate lists as merging unreviewed.
		unreviewed []string
	}{
		{name: "CI and a person's review before the merge", stages: pr + review},
		{name: "no review", stages: pr, want: []string{unreviewed}},
		{name: "no review, and the config says so", stages: pr, merge: " {require_review: false}", unreviewed: []string{"default"}},
		{name: "a review and a flow without one share the merge", stages: pr + review, merge: " {require_review: false}",
			flows: "flows:\n  quick: [implement, pr_ready, accepted]\n", unreviewed: []string{"quick"}},
		{name: "a review and a flow without one that does not say so", stages: pr + review,
			flows: "flows:\n  quick: [implement, pr_ready, accepted]\n", want: []string{strings.Replace(unreviewed, "%s", "flow `quick`", 1)}},
		{name: "require_review: false where every flow has a review", stages: pr + review, merge: " {require_review: false}",
			want: []string{"/repo/.agenttree.yaml:%d:9: warning: `require_review: false` of `merge_pr` in accepted changes nothing: " +
				"flow `default` has a person's review before it, whose approval the merge checks all the same (drop it)"}},
		{name: "a person's approval checked at the controller's stage is a review", stages: strings.Replace(pr, "      - pr_ci_passed:\n", "      - pr_ci_passed:\n      - pr_approved:\n", 1)},
		// A person's approve there records the approval the merge checks.
		{name: "a review without hooks", stages: pr + "  - name: review\n    human_review: true\n"},
		{name: "a merge among the entry hooks of the only review", stages: pr + "  - name: review\n    human_review: true\n    post_start:\n      - merge_pr:\n",
			last: "  - name: accepted\n    terminal: completion\n",
			want: []string{"/repo/.agenttree.yaml:%d:9: warning: `merge_pr` runs on entering the human review review, before a person approves there, " +
				"and flow `default` runs nothing before it that records a person's approval of the PR: its merges are refused " +
				"(run `merge_pr` in a stage after the review, which records the approval it merges, or add `- pr_approved:` to a stage before review)"}},
		{name: "no CI verdict recorded before the merge", stages: "  - name: pr_ready\n    host: controller\n    post_start:\n      - create_pr:\n    on_failure: {step_back_to: implement}\n" + review,
			want: []string{"/repo/.agenttree.yaml:%d:9: warning: `merge_pr` in accepted merges only a head CI passed, and flow `default` runs nothing before it " +
				"that records CI's verdict: its merges are refused (add `- pr_ci_passed:` or `- wait_for_ci:` to a stage before accepted)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last := strings.Replace(accepted, "%s", tt.merge, 1)
			if tt.last != "" {
				last = tt.last
			}
			text := "stages:\n  - name: implement\n" + tt.stages + last + tt.flows + "ci: {command: \"true\"}\n"
			cfg, err := parseYAML(t, text)
			require.NoError(t, err)
			line := 1 + strings.Count(text[:strings.Index(text, "- merge_pr:")], "\n")
			var want []string
			for _, w := range tt.want {
				if strings.Contains(w, "%s") {
					w = strings.Replace(w, "%s", "flow `default`", 1)
				}
				want = append(want, strings.Replace(w, "%d", strconv.Itoa(line), 1))
			}
			assert.ElementsMatch(t, want, diagStrings(cfg.Warnings))
			var flows []string
			for _, m := range cfg.UnreviewedMerges(stages.Approvals(catalog())) {
				assert.Equal(t, "accepted", m.Node)
				assert.Equal(t, line, m.Pos.Line)
				flows = append(flows, m.Flow)
			}
			assert.Equal(t, tt.unreviewed, flows)
		})
	}
}
