package pr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

var (
	methodParam = hooks.Enum("method", "how the PR is merged",
		string(forge.MergeSquash), string(forge.MergeMerge), string(forge.MergeRebase)).Default(string(forge.MergeSquash))
	deleteBranchParam  = hooks.Bool("delete_branch", "delete the PR's branch once it is merged").Default(true)
	requireReviewParam = hooks.Bool(stages.RequireReview,
		"false: a flow with no person's review before this stage merges on CI alone, as intended (validate lists where); "+
			"a flow with a review merges only the head a person approved either way").Default(true)
)

// approvalHook is the name of the approval gate, pr_approved.
const approvalHook = "pr_approved"

// prApproved passes when a person approved the PR at its current head.
// approved_sha binds the approval to the commit a person looked at:
// merge_pr merges nothing else.
func prApproved(ctx context.Context, c *hooks.Call) hooks.Outcome {
	self := c.Settings().AllowSelfApprove
	_, pr, o := openPR(ctx, c)
	if o != nil {
		if self {
			return hooks.Pass()
		}
		return *o
	}
	approved := withOutputs(hooks.Pass(), map[string]string{"approved_sha": pr.HeadSHA})
	if self {
		return approved
	}
	switch pr.ReviewDecision {
	case forge.ReviewApproved:
		if pr.ApprovedSHA != "" && pr.ApprovedSHA != pr.HeadSHA {
			return hooks.Failf("PR #%d was approved at %s, but its head is now %s; the new commits need a review (%s)",
				pr.Number, gitx.ShortSHA(pr.ApprovedSHA), gitx.ShortSHA(pr.HeadSHA), pr.URL)
		}
		return approved
	case forge.ReviewChangesRequested:
		return hooks.Failf("PR #%d has changes requested; address the review on %s", pr.Number, pr.URL)
	}
	return hooks.Failf("PR #%d is not approved yet; a reviewer approves it on %s (on the local forge: `agenttree approve %d`)", pr.Number, pr.URL, c.Issue.ID)
}

// mergePR merges the PR only at a head the host's records cover: CI
// passed on it (ci_passed_sha, which the CI gates write) and, where a
// person's review comes before this stage in the issue's flow, a person
// approved it (approved_sha, which the engine writes when a person
// approves at a human review, whatever hooks the review declares, and the
// approval gate when it passes). The records are the engine's, on the
// issue, and no other hook may write them (docs/SECURITY.md). Whatever moved the issue here
// (a person's move, a redirect, a push since the approval), the forge is
// asked to merge that head and nothing else: it refuses one that moved in
// between.
func mergePR(ctx context.Context, c *hooks.Call) hooks.Outcome {
	f, pr, o := openPRToAct(ctx, c, " without merging; reopen it first")
	if o != nil {
		return *o
	}
	reviewed, flow := reviewedAt(c)
	if o := unverified(c, pr, reviewed); o != nil {
		return *o
	}
	if c.DryRun() {
		return withOutputs(hooks.Pass(), prOutputs(pr))
	}
	method := forge.MergeMethod(methodParam.Get(c))
	if err := f.Merge(ctx, pr.Number, method, deleteBranchParam.Get(c), pr.HeadSHA); err != nil {
		return mergeFailure(ctx, c, f, pr, err)
	}
	out := withOutputs(hooks.Pass(), prOutputs(pr))
	out.Message = fmt.Sprintf("merged PR #%d into %s (%s)", pr.Number, pr.Base, method)
	if !reviewed && requireReviewParam.Get(c) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("flow %q has no review before %s: PR #%d was merged on CI alone; if the flow is meant to merge unreviewed, say so: `merge_pr: {%s: false}`",
			flow, c.Issue.Stage, pr.Number, stages.RequireReview))
	}
	return out
}

// reviewedAt reports whether a person's review comes before the issue's
// stage in its flow (stages.Flow.ReviewedAt), and names the flow. A flow
// the config does not hold counts as reviewed: the approval is asked for.
func reviewedAt(c *hooks.Call) (bool, string) {
	flow, err := c.Settings().Flow(c.Issue.Flow)
	if err != nil {
		return true, c.Issue.Flow
	}
	return flow.ReviewedAt(c.Issue.Stage, checksApproval), flow.Name
}

// checksApproval reports whether h is this package's approval gate,
// whose pass a person's approval of the PR is (the loader knows it by its
// spec's Approval; the hooks get no catalog).
func checksApproval(h *stages.HookEntry) bool { return h.Name == approvalHook }

// unverified is the refusal of a head the records do not cover, or nil.
// An approval on record binds the merge in any flow: someone meant the PR
// to be approved.
func unverified(c *hooks.Call, pr *forge.PR, reviewed bool) *hooks.Outcome {
	head, id := pr.HeadSHA, c.Issue.ID
	var why, todo []string
	switch passed, failed := c.Issue.Outputs[stages.CIPassedSHA], c.Issue.Outputs["failed_checks"]; {
	case passed == head:
	case passed == "" && failed != "" && c.Issue.HeadSHA == head:
		why = append(why, fmt.Sprintf("it failed CI (%s) and nothing has passed it since", failed))
	case passed == "":
		why = append(why, "no CI pass is on record for it")
		todo = append(todo, fmt.Sprintf("have CI pass on it (`agenttree pr wait %d`)", id))
	default:
		why = append(why, fmt.Sprintf("CI passed on %s, not on it", gitx.ShortSHA(passed)))
		todo = append(todo, fmt.Sprintf("have CI pass on it (`agenttree pr wait %d`)", id))
	}
	switch approved := c.Issue.Outputs[stages.ApprovedSHA]; {
	case approved == head, approved == "" && !reviewed:
	case approved == "":
		why = append(why, "no person's approval of it is on record")
		todo = append(todo, fmt.Sprintf("look at it and approve it (`agenttree approve %d`)", id))
	default:
		why = append(why, fmt.Sprintf("a person approved %s, not it", gitx.ShortSHA(approved)))
		todo = append(todo, fmt.Sprintf("look at the new commits and approve it (`agenttree approve %d`)", id))
	}
	if len(why) == 0 {
		return nil
	}
	next := fmt.Sprintf("send the issue back (`agenttree move %d STAGE --reason TEXT`)", id)
	if len(todo) > 0 {
		next = strings.Join(todo, ", then ") + "; or " + next
	}
	o := hooks.FailAs(hooks.ClassUnverifiedHead, "PR #%d was not merged at its head %s: %s. A person decides: %s",
		pr.Number, gitx.ShortSHA(head), strings.Join(why, "; "), next)
	return &o
}

// mergeFailure is a merge the forge refused. A conflict found only now
// (the base moved since the gates ran) is the conflict check_conflicts
// would have reported, with the same facts, so the same handling applies.
func mergeFailure(ctx context.Context, c *hooks.Call, f forge.Forge, pr *forge.PR, err error) hooks.Outcome {
	switch {
	case errors.Is(err, forge.ErrHeadChanged):
		return hooks.FailAs(hooks.ClassUnverifiedHead, "PR #%d was not merged: its head moved from %s while it was being merged (%v); the new head needs CI and, where the flow has a review, a person's approval: a person decides what next (`agenttree approve %d` once CI passed on it, or `agenttree move %d STAGE --reason TEXT`)",
			pr.Number, gitx.ShortSHA(pr.HeadSHA), err, c.Issue.ID, c.Issue.ID)
	case errors.Is(err, forge.ErrConflict):
		files := forgeConflictFiles(ctx, f, pr)
		return conflictFailure(fmt.Sprintf("PR #%d cannot be merged: %v. %s", pr.Number, err, conflictReason(c, pr, files)), files)
	}
	return forgeFailure(c, fmt.Sprintf("merging PR #%d", pr.Number), err)
}
