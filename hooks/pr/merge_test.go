package pr

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// mergePipeline has a flow with a person's review before the merge (the
// default) and one without (quick); both merge at accepted.
const mergePipeline = `
stages:
  - name: implement
  - name: pr_ready
    host: controller
    post_start:
      - create_pr:
      - wait_for_ci:
    pre_completion:
      - pr_ci_passed:
    on_failure: {step_back_to: implement}
  - name: review
    human_review: true
    pre_completion:
      - pr_approved:
  - name: accepted
    terminal: completion
    post_start:
      - merge_pr:
flows:
  quick: [implement, pr_ready, accepted]
`

// mergeConfig is mergePipeline loaded with the PR hooks.
func mergeConfig(t *testing.T) *stages.Config {
	t.Helper()
	cfg, err := load.Parse("merge.yaml", []byte(mergePipeline), registry())
	require.NoError(t, err)
	return cfg
}

// record keeps a hook's outputs on the issue, as the engine does.
func record(issue *hooks.Issue, o hooks.Outcome) {
	for k, v := range o.Outputs {
		if v == "" {
			delete(issue.Outputs, k)
			continue
		}
		issue.Outputs[k] = v
		if k == "head_sha" {
			issue.HeadSHA = v
		}
	}
}

// covered records, as the CI gate and a person's approval would, that
// CI passed on the issue's head and a person approved it.
func covered(issue *hooks.Issue) {
	issue.Outputs["ci_passed_sha"], issue.Outputs["approved_sha"] = issue.HeadSHA, issue.HeadSHA
}

// mergeRig is one forge with one open PR of issue 7, driven as the
// pipeline drives it: the gates record CI and approvals on the issue.
type mergeRig interface {
	// env and issue are what merge_pr runs with; the issue is at accepted.
	env() *hooks.Env
	issue() *hooks.Issue
	// passCI has CI pass on the PR's head and the CI gate record it.
	passCI(t *testing.T)
	// approve is a person's approval of the PR's head, which the
	// approval gate records.
	approve(t *testing.T)
	// push puts a new commit on the PR's branch, as the agent would, and
	// returns it.
	push(t *testing.T) string
	// merged reports whether the PR is merged on the forge.
	merged(t *testing.T) bool
	// pushWhileMerging makes the forge's next merge find a new commit on
	// the branch, pushed after merge_pr read the PR.
	pushWhileMerging(t *testing.T)
}

// localRig is the local forge on a bare origin, with CI that passes.
type localRig struct {
	l      *localPR
	pushes int
}

func newLocalRig(t *testing.T) mergeRig {
	l := newLocalPR(t, "")
	l.openPR(t)
	l.env.Config = mergeConfig(t)
	l.issue.Stage = "accepted"
	return &localRig{l: l}
}

func (r *localRig) env() *hooks.Env     { return r.l.env }
func (r *localRig) issue() *hooks.Issue { return r.l.issue }

func (r *localRig) passCI(t *testing.T) {
	o := pollUntilDone(t, r.l, "wait_for_ci")
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	record(r.l.issue, o)
}

func (r *localRig) approve(t *testing.T) {
	require.NoError(t, r.l.forge.Approve(context.Background(), 1, "maria"))
	o := runHook(t, r.l.env, r.l.issue, "pr_approved", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	record(r.l.issue, o)
}

func (r *localRig) push(t *testing.T) string {
	r.pushes++
	sha := gittest.Commit(t, r.l.work, fmt.Sprintf("late%d.txt", r.pushes), "late\n", "a late change")
	gittest.Run(t, r.l.work, "push", "--quiet", "origin", "issue-7")
	return sha
}

func (r *localRig) merged(t *testing.T) bool {
	rec, err := r.l.forge.Record(context.Background(), 1)
	require.NoError(t, err)
	return rec.State == forge.StateMerged
}

func (r *localRig) pushWhileMerging(t *testing.T) {
	r.l.env.Forge = &pushingForge{Forge: r.l.forge, push: func() { r.push(t) }}
}

// githubRig is the GitHub client and the fake GitHub.
type githubRig struct {
	f     *ghFixture
	n     int
	iss   *hooks.Issue
	heads int
}

func newGitHubRig(t *testing.T) mergeRig {
	f := newGitHubFixture(t, github.RetryPolicy{})
	n, issue := f.addPR(t, shaA)
	f.env.Config = mergeConfig(t)
	issue.Stage = "accepted"
	return &githubRig{f: f, n: n, iss: issue}
}

func (r *githubRig) env() *hooks.Env     { return r.f.env }
func (r *githubRig) issue() *hooks.Issue { return r.iss }

func (r *githubRig) head(t *testing.T) string {
	pr, ok := r.f.srv.PR(r.n)
	require.True(t, ok)
	return pr.HeadSHA
}

func (r *githubRig) passCI(t *testing.T) {
	r.f.srv.AddCheckRun(r.head(t), githubtest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	o := runHook(t, r.f.env, r.iss, "pr_ci_passed", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	record(r.iss, o)
}

func (r *githubRig) approve(t *testing.T) {
	r.f.srv.AddReview(r.n, githubtest.Review{Author: "maria", State: "APPROVED"})
	r.f.srv.SetReviewDecision(r.n, "APPROVED")
	o := runHook(t, r.f.env, r.iss, "pr_approved", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	record(r.iss, o)
}

func (r *githubRig) push(t *testing.T) string {
	r.heads++
	sha := fmt.Sprintf("%040x", 0xc0ffee00+r.heads)
	r.f.srv.SetHead(r.n, sha)
	return sha
}

func (r *githubRig) merged(t *testing.T) bool {
	pr, ok := r.f.srv.PR(r.n)
	require.True(t, ok)
	return pr.State == "merged"
}

func (r *githubRig) pushWhileMerging(t *testing.T) {
	r.f.env.Forge = &pushingForge{Forge: r.f.client, push: func() { r.push(t) }}
}

// pushingForge is a forge on which a commit lands on the PR's branch
// between merge_pr's look at the PR and its merge.
type pushingForge struct {
	forge.Forge
	push func()
}

func (p *pushingForge) Merge(ctx context.Context, number int, method forge.MergeMethod, deleteBranch bool, expectHead string) error {
	p.push()
	return p.Forge.Merge(ctx, number, method, deleteBranch, expectHead)
}

// merge_pr merges only a head CI passed and, in a flow with a person's
// review before the merge, a person approved, as the gates recorded them;
// anything else is left for a person, never for the agent, and the forge
// merges exactly the head that was checked.
func TestMergeOnlyTheHeadCIPassedAndAPersonApproved(t *testing.T) {
	short := gitx.ShortSHA
	tests := []struct {
		name   string
		flow   string
		params map[string]any
		// story brings the PR to the merge and returns what the refusal
		// must say; nil: it merges.
		story func(t *testing.T, r mergeRig) []string
	}{
		{name: "CI passed and a person approved the head", story: func(t *testing.T, r mergeRig) []string {
			r.passCI(t)
			r.approve(t)
			return nil
		}},
		{name: "the head moved after the approval", story: func(t *testing.T, r mergeRig) []string {
			r.passCI(t)
			r.approve(t)
			approved := r.issue().Outputs["approved_sha"]
			moved := r.push(t)
			return []string{"at its head " + short(moved), "a person approved " + short(approved) + ", not it", "CI passed on " + short(approved) + ", not on it"}
		}},
		{name: "CI passed on the new head, but nobody approved it", story: func(t *testing.T, r mergeRig) []string {
			r.passCI(t)
			r.approve(t)
			approved := r.issue().Outputs["approved_sha"]
			moved := r.push(t)
			r.passCI(t)
			return []string{"at its head " + short(moved), "a person approved " + short(approved) + ", not it", "`agenttree approve 7`"}
		}},
		{name: "no approval is on record (a person's move past the review)", story: func(t *testing.T, r mergeRig) []string {
			r.passCI(t)
			return []string{"no person's approval of it is on record"}
		}},
		{name: "CI has not passed on the head", story: func(t *testing.T, r mergeRig) []string {
			r.approve(t)
			return []string{"no CI pass is on record for it", "`agenttree pr wait 7`"}
		}},
		{name: "require_review: false does not waive a flow's review", params: map[string]any{stages.RequireReview: false},
			story: func(t *testing.T, r mergeRig) []string {
				r.passCI(t)
				return []string{"no person's approval of it is on record"}
			}},
		{name: "a flow without a review, saying so, merges on CI alone", flow: "quick", params: map[string]any{stages.RequireReview: false},
			story: func(t *testing.T, r mergeRig) []string {
				r.passCI(t)
				return nil
			}},
		{name: "a flow without a review still needs CI on the head", flow: "quick", params: map[string]any{stages.RequireReview: false},
			story: func(t *testing.T, r mergeRig) []string {
				r.passCI(t)
				moved := r.push(t)
				return []string{"at its head " + short(moved), "CI passed on", "not on it"}
			}},
		{name: "the head moved while merging", story: func(t *testing.T, r mergeRig) []string {
			r.passCI(t)
			r.approve(t)
			r.pushWhileMerging(t)
			return []string{"its head moved from " + short(r.issue().HeadSHA), forge.ErrHeadChanged.Error()}
		}},
	}
	rigs := map[string]func(*testing.T) mergeRig{"local": newLocalRig, "github": newGitHubRig}
	for forgeName, newRig := range rigs {
		for _, tt := range tests {
			t.Run(forgeName+"/"+tt.name, func(t *testing.T) {
				r := newRig(t)
				r.issue().Flow = tt.flow
				want := tt.story(t, r)
				o := runHook(t, r.env(), r.issue(), "merge_pr", tt.params)
				if want == nil {
					require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
					assert.True(t, r.merged(t), "the PR is merged")
					assert.Empty(t, o.Warnings, "a flow that says it merges unreviewed is not warned")
					return
				}
				require.Equal(t, hooks.KindFail, o.Kind, o.Reason)
				assert.Equal(t, hooks.ClassUnverifiedHead, o.Class)
				assert.False(t, o.AgentFixable(), "a person decides; the agent is not sent it")
				for _, w := range want {
					assert.Contains(t, o.Reason, w)
				}
				assert.False(t, r.merged(t), "nothing is merged")
			})
		}
	}
}

// A flow with no review that does not say it merges unreviewed merges on
// CI, and the merge says what to write.
func TestMergeInAFlowWithoutAReviewSaysSo(t *testing.T) {
	r := newGitHubRig(t)
	r.issue().Flow = "quick"
	r.passCI(t)
	o := runHook(t, r.env(), r.issue(), "merge_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, []string{"flow \"quick\" has no review before accepted: PR #1 was merged on CI alone; if the flow is meant to merge unreviewed, say so: `merge_pr: {require_review: false}`"}, o.Warnings)
}
