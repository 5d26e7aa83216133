package pr

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

var (
	draftParam  = hooks.Bool("draft", "open the PR as a draft").Default(false)
	baseParam   = hooks.String("base", "the branch the PR merges into; empty: the issue's default branch").Default("")
	labelsParam = hooks.List("labels", "labels to put on the PR")
	titleParam  = hooks.Template("title", "the PR's title").Default("{{issue_title}}")
	bodyParam   = hooks.Template("body", "the PR's description").
			Default("Issue {{issue_id}}: {{issue_title}}\n\nOpened by agenttree from branch `{{branch}}`.")
	commentParam = hooks.Template("comment", "a comment left on the PR as it is closed; empty: none").Default("")
)

// createPR pushes the issue's branch and opens its PR, or finds the one a
// previous call opened. Once there is a PR, the push may replace a head
// the agent rewrote, never commits it did not have (pushBranch).
func createPR(ctx context.Context, c *hooks.Call) hooks.Outcome {
	f, o := forgeOf(c)
	if o != nil {
		return *o
	}
	g, o := gitOf(c)
	if o != nil {
		return *o
	}
	branch := c.Issue.Branch
	if branch == "" {
		return hooks.Failf("issue %d has no branch to open a PR from", c.Issue.ID)
	}
	if c.DryRun() {
		out := hooks.Pass()
		out.Message = fmt.Sprintf("would push %s and open a PR", branch)
		return out
	}
	if c.Settings().State.Nodes.On {
		if o := takeBranch(ctx, c, g, branch); o != nil {
			return *o
		}
	}
	rebased, o := pushBranch(ctx, c, f, g, branch)
	if o != nil {
		return *o
	}
	vars := c.Issue.MessageVars()
	pr, created, err := f.EnsurePR(ctx, forge.NewPR{Branch: branch, Base: prBase(c),
		Title: stages.Render(titleParam.Get(c), vars), Body: stages.Render(bodyParam.Get(c), vars),
		Draft: draftParam.Get(c), Labels: labelsParam.Get(c)})
	if err != nil {
		// An outage is waited out: a step back would send the agent to
		// fix what is the forge's fault.
		if errors.Is(err, forge.ErrAuth) || errors.Is(err, forge.ErrRateLimit) || errors.Is(err, forge.ErrTampered) || errors.Is(err, forge.ErrServer) {
			return forgeFailure(c, "opening the PR", err)
		}
		return hooks.Failf("opening a PR for %s: %v", branch, err)
	}
	out := withOutputs(hooks.Pass(), prOutputs(pr))
	if rebased != "" {
		// What check_conflicts would have recorded and said, had the
		// kill not lost it: the agent pulls before it changes anything.
		if from, err := g.RevParse(ctx, "refs/heads/"+branch); err == nil {
			maps.Copy(out.Outputs, rebasedOutputs(from, rebased))
			out.Send = rebaseNotice(c, pr, rebased, nil)
		}
	}
	if created {
		out.Message = fmt.Sprintf("opened PR #%d: %s", pr.Number, pr.URL)
	} else {
		out.Message = fmt.Sprintf("PR #%d is open: %s", pr.Number, pr.URL)
	}
	return out
}

// prBase is the branch a new PR merges into.
func prBase(c *hooks.Call) string {
	if b := baseParam.Get(c); b != "" {
		return b
	}
	if c.Issue.DefaultBranch != "" {
		return c.Issue.DefaultBranch
	}
	return c.Settings().DefaultBranch
}

func closePR(ctx context.Context, c *hooks.Call) hooks.Outcome {
	if prNumber(c) == 0 {
		return hooks.Pass() // dropped before it had a PR: nothing to close
	}
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	if pr.State != forge.StateOpen || c.DryRun() {
		return hooks.Pass()
	}
	comment := stages.Render(commentParam.Get(c), c.Issue.MessageVars())
	if err := f.Close(ctx, pr.Number, comment); err != nil {
		return forgeFailure(c, fmt.Sprintf("closing PR #%d", pr.Number), err)
	}
	return hooks.Pass()
}
