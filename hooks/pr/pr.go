// Package pr holds the hooks that drive an issue's pull request on the
// forge: opening and closing it (open.go) and pushing its branch
// (push.go), waiting for and checking its CI (ci.go), asking the
// controller to watch it (watch.go), conflicts and rebases
// (conflicts.go), review and merge (merge.go). CI facts are bound to a
// commit: a result for any commit but the PR's head is ignored, and an
// error talking to the forge is never a CI failure.
package pr

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// Defs are the PR hooks.
func Defs() []hooks.Def {
	return []hooks.Def{
		{HookSpec: stages.HookSpec{Name: "create_pr",
			Params:  hooks.Specs(draftParam, baseParam, labelsParam, titleParam, bodyParam),
			Outputs: []string{"pr_number", "pr_url", "head_sha", "rebased_from", "rebased_to"},
			Doc:     "Pushes the issue's branch and opens its PR, or finds the one an earlier call opened. With `state.nodes` it takes the branch as the agent's node pushed it (`push_branch`).",
			Example: "- create_pr: {draft: false, labels: [agenttree]}", Pushes: true}, Run: createPR},
		{HookSpec: stages.HookSpec{Name: "push_branch", Pushes: true,
			Doc:     "Pushes the issue's branch from the work tree it runs in, never overwriting commits it did not have: with `state.nodes`, in the agent's stage that hands the issue to the controller, whose host has none of the agent's commits.",
			Example: "- push_branch:"}, Run: pushBranchHook},
		{HookSpec: stages.HookSpec{Name: "wait_for_ci", Waits: true,
			Params:  hooks.Specs(ciTimeoutParam, newRunTimeoutParam, pollIntervalParam, rerunFailedParam),
			Outputs: []string{"pr_number", "pr_url", "head_sha", "ci_passed_sha", "failed_checks", "failure_details", "ci_url", "failure_reason", "conflict_files"},
			Doc: "Waits for CI on the PR's head commit: pending while checks run, then passes or fails with the failed checks. " +
				"Results for any other commit are ignored.",
			Example: "- wait_for_ci: {timeout: 600, on_failure: step_back}"}, Run: waitForCI},
		{HookSpec: stages.HookSpec{Name: "pr_ci_passed",
			Outputs: []string{"pr_number", "pr_url", "head_sha", "ci_passed_sha", "failed_checks", "failure_details", "ci_url", "failure_reason"},
			Doc:     "Gate: passes when CI passed on the PR's current head, without waiting.",
			Example: "- pr_ci_passed:"}, Run: prCIPassed},
		{HookSpec: stages.HookSpec{Name: "poll_pr_status", Watches: true,
			Params:  append(hooks.Specs(watchIntervalParam), watchPolicyParams...),
			Outputs: []string{"watch_pr", "watch_interval"},
			Doc: "Asks the controller to watch the PR in the background while the stage is worked on; " +
				"a CI failure or a conflict it sees goes to `on_ci_failure` or `on_conflict`. It never blocks.",
			Example: "- poll_pr_status: {interval: 60, on_ci_failure: {step_back_to: implement.code}}"}, Run: pollPRStatus},
		{HookSpec: stages.HookSpec{Name: "check_conflicts", Conflicts: true,
			Params:  hooks.Specs(autoRebaseParam),
			Outputs: []string{"conflict_files", "head_sha", "rebased_from", "rebased_to", "failure_reason"},
			Doc: "Checks with git that the PR's head merges cleanly into its base; with `auto_rebase` it also keeps the branch " +
				"on top of its base. A conflict left goes to `on_conflict`.",
			Example: "- check_conflicts: {auto_rebase: true, on_conflict: step_back}"}, Run: checkConflicts},
		{HookSpec: stages.HookSpec{Name: "pr_mergeable", Conflicts: true, Outputs: []string{"conflict_files", "failure_reason"},
			Doc:     "Gate: passes when the forge says the PR merges cleanly into its base.",
			Example: "- pr_mergeable:"}, Run: prMergeable},
		{HookSpec: stages.HookSpec{Name: "rebase", Resolves: true, Outputs: []string{"conflict_files", "head_sha", "rebased_from", "rebased_to", "failure_reason"},
			Doc: "Rebases the PR's branch onto its base and pushes it. In an on_failure list, its pass ends the list " +
				"and the failed hook runs again.",
			Example: "- check_conflicts: {on_conflict: [rebase, step_back]}"}, Run: rebase},
		{HookSpec: stages.HookSpec{Name: approvalHook, Approval: true, Outputs: []string{"approved_sha"},
			Doc:     "Gate: passes when a person approved the PR at its current head; the approval is bound to that commit.",
			Example: "- pr_approved:"}, Run: prApproved},
		{HookSpec: stages.HookSpec{Name: "merge_pr", Conflicts: true, Params: hooks.Specs(methodParam, deleteBranchParam, requireReviewParam),
			Outputs: []string{"pr_number", "pr_url", "head_sha", "conflict_files", "failure_reason"},
			Doc: "Merges the PR only at a head CI passed and, where a person's review comes before it in the issue's flow, a person approved, " +
				"as the host recorded them; the forge merges that head or nothing. Anything else (a push since, a move past the review) is left for a person.",
			Example: "- merge_pr: {method: squash, delete_branch: true}"}, Run: mergePR},
		{HookSpec: stages.HookSpec{Name: "close_pr", Params: hooks.Specs(commentParam),
			Doc:     "Closes the issue's PR without merging it, with an optional comment.",
			Example: "- close_pr: {comment: \"Closed: {{issue_title}} will not be done.\"}"}, Run: closePR},
	}
}

// remote is the git remote the issue's branch is pushed to.
func remote(c *hooks.Call) string {
	if c.Env != nil && c.Env.Remote != "" {
		return c.Env.Remote
	}
	return gitx.DefaultRemote
}

// forgeOf is the forge, or the failure that says why there is none.
func forgeOf(c *hooks.Call) (forge.Forge, *hooks.Outcome) {
	if c.Env == nil || c.Env.Forge == nil {
		o := hooks.FailAs(hooks.ClassConfig, "hook `%s` needs a forge, and none is set up: set `forge: local` or `forge: github` in .agenttree.yaml", c.HookName())
		return nil, &o
	}
	// A forge opened on first use says here, before anything is pushed,
	// whether it can be opened at all.
	if _, err := forge.Unwrap(c.Env.Forge); err != nil {
		// What runs the hook names it (create_pr (post_start of pr_ready): ...).
		o := hooks.FailAs(hooks.ClassConfig, "%v", err)
		return nil, &o
	}
	return c.Env.Forge, nil
}

// gitOf is git in the issue's work tree, or the failure that says why
// there is none.
func gitOf(c *hooks.Call) (*gitx.Repo, *hooks.Outcome) {
	if c.Env == nil || c.Env.Git == nil {
		o := hooks.FailAs(hooks.ClassConfig, "hook `%s` needs git in the issue's work tree, and none is set up", c.HookName())
		return nil, &o
	}
	return c.Env.Git(c.Issue.WorkDir), nil
}

// forgeFailure turns an error talking to the forge into an outcome. It is
// never a CI failure: a rate limit or an outage is waited out; a record
// changed outside agenttree stops the issue for a person (tampered).
func forgeFailure(c *hooks.Call, what string, err error) hooks.Outcome {
	if o, ok := tampered(c, what, err); ok {
		return o
	}
	var rl *forge.RateLimitError
	switch {
	case errors.As(err, &rl):
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = rl.Reset.Sub(c.Now())
		}
		if wait <= 0 {
			wait = time.Minute
		}
		return pendingAs(hooks.ClassRateLimit, wait, fmt.Sprintf("%s: %v", what, err))
	case errors.Is(err, forge.ErrUnavailable):
		// A person puts it right: trying again changes nothing.
		return hooks.FailAs(hooks.ClassConfig, "%s: %v", what, err)
	case errors.Is(err, forge.ErrAuth):
		return hooks.FailAs(hooks.ClassAuth, "%s: %v; check the token (`gh auth status`, GH_TOKEN)", what, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return pendingAs(hooks.ClassTimeout, c.Settings().CIPolling.PollInterval, fmt.Sprintf("%s: %v", what, err))
	}
	return pendingAs(hooks.ClassForge, c.Settings().CIPolling.PollInterval, fmt.Sprintf("%s failed (will retry): %v", what, err))
}

func pendingAs(class hooks.Class, d time.Duration, reason string) hooks.Outcome {
	o := hooks.Pending(d, reason)
	o.Class = class
	return o
}

// openPR loads the issue's PR.
func openPR(ctx context.Context, c *hooks.Call) (forge.Forge, *forge.PR, *hooks.Outcome) {
	f, o := forgeOf(c)
	if o != nil {
		return nil, nil, o
	}
	n := prNumber(c)
	if n == 0 {
		o := hooks.Failf("issue %d has no pull request yet; the create_pr hook opens one", c.Issue.ID)
		return nil, nil, &o
	}
	pr, err := f.PR(ctx, n)
	if err != nil {
		o := forgeFailure(c, fmt.Sprintf("reading PR #%d", n), err)
		if errors.Is(err, forge.ErrNotFound) {
			o = hooks.Failf("PR #%d of issue %d no longer exists on the forge; open a new one (create_pr)", n, c.Issue.ID)
		}
		return nil, nil, &o
	}
	return f, pr, nil
}

// prNumber is the issue's PR number, 0 when it has none yet.
func prNumber(c *hooks.Call) int {
	if c.Issue.PRNumber != 0 {
		return c.Issue.PRNumber
	}
	n, _ := strconv.Atoi(c.Issue.Outputs["pr_number"])
	return n
}

// openPRToAct loads the issue's PR for a hook that acts on an open one. A
// merged PR is done: the outcome passes with its facts. A closed one is a
// failure; closed ends its reason ("; reopen it first").
func openPRToAct(ctx context.Context, c *hooks.Call, closed string) (forge.Forge, *forge.PR, *hooks.Outcome) {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return nil, nil, o
	}
	var done hooks.Outcome
	switch pr.State {
	case forge.StateMerged:
		done = withOutputs(hooks.Pass(), prOutputs(pr))
	case forge.StateClosed:
		done = hooks.Failf("PR #%d is closed%s", pr.Number, closed)
	default:
		return f, pr, nil
	}
	return nil, nil, &done
}

// prOutputs are the PR's facts, for the issue and later messages.
func prOutputs(pr *forge.PR) map[string]string {
	return map[string]string{"pr_number": strconv.Itoa(pr.Number), "pr_url": pr.URL, "head_sha": pr.HeadSHA}
}

func withOutputs(o hooks.Outcome, outputs map[string]string) hooks.Outcome {
	if o.Outputs == nil {
		o.Outputs = map[string]string{}
	}
	for k, v := range outputs {
		o.Outputs[k] = v
	}
	return o
}
