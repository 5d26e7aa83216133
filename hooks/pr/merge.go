package pr

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
)

var (
	methodParam = hooks.Enum("method", "how the PR is merged",
		string(forge.MergeSquash), string(forge.MergeMerge), string(forge.MergeRebase)).Default(string(forge.MergeSquash))
	deleteBranchParam = hooks.Bool("delete_branch", "delete the PR's branch once it is merged").Default(true)
)

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

// mergePR merges exactly the head the CI gates verified (recorded on the
// issue) and a person approved; a push since then must go through CI and
// review first.
func mergePR(ctx context.Context, c *hooks.Call) hooks.Outcome {
	f, pr, o := openPRToAct(ctx, c, " without merging; reopen it first")
	if o != nil {
		return *o
	}
	expect := c.Issue.Outputs["ci_passed_sha"]
	if expect == "" {
		if failed := c.Issue.Outputs["failed_checks"]; failed != "" && c.Issue.HeadSHA == pr.HeadSHA {
			// No CI gate passed it, and the last one failed on this very
			// head (a stage skipped by hand): merging would ship it.
			return hooks.Failf("PR #%d's head %s failed CI (%s) and nothing has passed it since; fix it, or have CI run again, before it merges",
				pr.Number, gitx.ShortSHA(pr.HeadSHA), failed)
		}
		expect = pr.HeadSHA // no CI gate in this pipeline
	}
	if approved := c.Issue.Outputs["approved_sha"]; approved != "" && approved != expect {
		return hooks.Failf("PR #%d is not at the commit a person approved (approved %s, CI verified %s, head %s); the new code needs review: a person approves again",
			pr.Number, gitx.ShortSHA(approved), gitx.ShortSHA(expect), gitx.ShortSHA(pr.HeadSHA))
	}
	if c.DryRun() {
		return withOutputs(hooks.Pass(), prOutputs(pr))
	}
	method := forge.MergeMethod(methodParam.Get(c))
	if err := f.Merge(ctx, pr.Number, method, deleteBranchParam.Get(c), expect); err != nil {
		return mergeFailure(ctx, c, f, pr, err)
	}
	out := withOutputs(hooks.Pass(), prOutputs(pr))
	out.Message = fmt.Sprintf("merged PR #%d into %s (%s)", pr.Number, pr.Base, method)
	return out
}

// mergeFailure is a merge the forge refused. A conflict found only now
// (the base moved since the gates ran) is the conflict check_conflicts
// would have reported, with the same facts, so the same handling applies.
func mergeFailure(ctx context.Context, c *hooks.Call, f forge.Forge, pr *forge.PR, err error) hooks.Outcome {
	switch {
	case errors.Is(err, forge.ErrHeadChanged):
		return hooks.Failf("PR #%d is not at the commit CI verified (%v); its new head needs CI before it merges", pr.Number, err)
	case errors.Is(err, forge.ErrConflict):
		files := forgeConflictFiles(ctx, f, pr)
		return conflictFailure(fmt.Sprintf("PR #%d cannot be merged: %v. %s", pr.Number, err, conflictReason(c, pr, files)), files)
	}
	return forgeFailure(c, fmt.Sprintf("merging PR #%d", pr.Number), err)
}
