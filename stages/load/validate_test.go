package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages/load"
)

// A person approves a human review; the controller runs its entry hooks
// at most. A review the controller would run with nothing to do is an
// error, at the stage or substage that says so.
func TestHumanReviewRunByTheControllerAlone(t *testing.T) {
	const refused = "is a human review run by the host controller: a person approves a human review, the controller never does " +
		"(drop `host: controller` (the stage waits for a person), or give the controller entry work to do there (post_start hooks))"
	const done = "  - name: accepted\n    terminal: completion\n"
	tests := []struct {
		name string
		yaml string
		want []string // the errors, whole
	}{
		{name: "host: controller",
			yaml: "stages:\n  - name: review\n    human_review: true\n    host: controller\n" + done,
			want: []string{":2:5: error: stage review " + refused}},
		{name: "role: controller",
			yaml: "stages:\n  - name: review\n    role: controller\n    human_review: true\n    pre_completion:\n      - pr_approved:\n" + done,
			want: []string{":2:5: error: stage review " + refused}},
		{name: "a review substage of a controller stage",
			yaml: "stages:\n  - name: pr\n    host: controller\n    substages:\n      - name: open\n        post_start: [create_pr]\n      - name: approve\n        human_review: true\n" + done,
			want: []string{":7:9: error: stage pr.approve " + refused}},
		{name: "a controller substage of a review",
			yaml: "stages:\n  - name: review\n    human_review: true\n    substages:\n      - name: look\n      - name: merge\n        host: controller\n" + done,
			want: []string{":6:9: error: stage review.merge " + refused}},
		{name: "the design notes' variant: the controller runs the review's entry hooks",
			yaml: "stages:\n  - name: review\n    human_review: true\n    host: controller\n    post_start: [create_pr, wait_for_ci]\n" +
				"    pre_completion: [pr_approved]\n    on_failure: {step_back_to: review}\n" + done},
		{name: "a review whose gate the controller's forge answers",
			yaml: "stages:\n  - name: review\n    human_review: true\n    pre_completion: [pr_approved]\n" + done},
		{name: "a controller stage before the review",
			yaml: "stages:\n  - name: pr\n    host: controller\n  - name: review\n    human_review: true\n" + done},
		{name: "the earlier tool's spelling is refused too",
			yaml: "flows:\n  default:\n    stages:\n      review:\n        human_review: true\n        host: controller\n      accepted:\n        is_completion: true\n",
			want: []string{":4:7: error: stage review " + refused}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, tt.yaml)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = "/repo/.agenttree.yaml" + w
			}
			assert.Equal(t, want, errorStrings(t, err))
		})
	}
}

// A flow must include a stage it ends in, when the config has one: an
// issue on it is never done otherwise.
func TestFlowWithNoTerminalStage(t *testing.T) {
	const stagesYAML = "stages:\n  - name: backlog\n    parking_lot: true\n  - name: implement\n  - name: accepted\n    terminal: completion\n" +
		"  - name: not_doing\n    terminal: abandon\n    redirect_only: true\n"
	tests := []struct {
		name     string
		yaml     string
		errors   []string
		warnings []string
	}{
		{name: "a flow that leaves out the end",
			yaml: stagesYAML + "flows:\n  quick: [backlog, implement]\n",
			errors: []string{`:11:3: error: flow "quick" has no terminal stage: an issue on it can never be done ` +
				"(add the stage it ends in (one with `terminal: completion`) to the flow)"}},
		{name: "each such flow, by name",
			yaml: stagesYAML + "flows:\n  quick: [implement]\n  hotfix: {stages: [implement, accepted]}\n  spike: [backlog, implement]\n",
			errors: []string{
				`:11:3: error: flow "quick" has no terminal stage`,
				`:13:3: error: flow "spike" has no terminal stage`,
			}},
		{name: "ending in the abandon stage is an end",
			yaml: stagesYAML + "flows:\n  spike: [implement, not_doing]\n"},
		{name: "the default flow has every stage",
			yaml: stagesYAML},
		{name: "a pipeline that ends where its last stage is",
			yaml: "stages:\n  - name: implement\n  - name: review\nflows:\n  quick: [implement]\n"},
		{name: "a flow of parking lots is reported once, as such",
			yaml:   stagesYAML + "flows:\n  someday: [backlog]\n",
			errors: []string{`:11:3: error: flow "someday" has only parking-lot stages`}},
		{name: "the earlier tool let it pass: a warning",
			yaml: "flows:\n  default:\n    stages:\n      implement:\n      accepted:\n        is_completion: true\n  quick:\n    stages: [implement]\n",
			warnings: []string{`:7:3: warning: flow "quick" has no terminal stage: an issue on it can never be done ` +
				"(an issue on it stays at its last stage; add the stage it ends in (one with `is_completion: true`) if that is not the intent)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(tt.yaml), catalog())
			if tt.errors != nil {
				require.Error(t, err)
				want := make([]string, len(tt.errors))
				for i, w := range tt.errors {
					want[i] = "/repo/.agenttree.yaml" + w
				}
				containEach(t, errorStrings(t, err), want)
				return
			}
			require.NoError(t, err)
			want := make([]string, len(tt.warnings))
			for i, w := range tt.warnings {
				want[i] = "/repo/.agenttree.yaml" + w
			}
			assert.Equal(t, want, diagStrings(cfg.Warnings))
		})
	}
}
