package pr

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/pr/internal/held"
	"github.com/agenttree/agenttree/internal/gitx"
)

// pushBranch pushes the issue's branch from its work tree, or returns the
// failure that says why it did not.
//
// Without an open PR it is a plain push, which never overwrites anything.
// With one, the agent may have rewritten the branch (rebased it after a
// conflict), so the push carries a lease on the PR's head as the forge
// reports it: git refuses it when the remote moved on since. A lease on a
// head read just now guards only that moment, so the branch must also
// include that head, as git's --force-if-includes asks: its tip or an
// earlier one (its reflog) held it, and a rewrite dropped it on purpose.
// Commits the work tree never had are someone else's, and the push is
// refused before it is tried, unless they are agenttree's own rebase of
// the branch (ownRebase, held.Rebased).
//
// rebased is the remote's head when it is agenttree's own rebase of the
// branch whose record a crash lost (held.Rebased), and nothing was
// pushed.
func pushBranch(ctx context.Context, c *hooks.Call, f forge.Forge, g *gitx.Repo, branch string) (rebased string, o *hooks.Outcome) {
	lease, push, o := pushLease(ctx, c, f, g, branch)
	if o != nil || !push {
		return lease, o
	}
	if err := g.Push(ctx, remote(c), branch, lease); err != nil {
		if lease == "" && errors.Is(err, gitx.ErrPushRejected) {
			if head := pushedRebase(ctx, c, g, branch); head != "" {
				return head, nil
			}
		}
		o := hooks.Failf("%s", pushRefused(c, branch, lease, err))
		return "", &o
	}
	return "", nil
}

// pushedRebase is the remote branch's head, which refused a push with no
// PR to lease on, when it is the branch rebased onto the base
// (held.Rebased); else "". A pass killed after check_conflicts pushed
// its rebase records nothing, not even the PR it opened, so the next
// create_pr pushes plainly over agenttree's own rebase. Nothing is to be
// pushed; EnsurePR finds the PR.
func pushedRebase(ctx context.Context, c *hooks.Call, g *gitx.Repo, branch string) string {
	rem, base := remote(c), prBase(c)
	tracking := "refs/remotes/" + rem + "/" + branch
	if err := g.Fetch(ctx, rem, "+refs/heads/"+branch+":"+tracking, "+refs/heads/"+base+":refs/remotes/"+rem+"/"+base); err != nil {
		return ""
	}
	if head, err := g.RevParse(ctx, tracking); err == nil && held.Rebased(ctx, g, head, rem+"/"+base, branch) {
		return head
	}
	return ""
}

// pushLease is the head the remote branch must be at for the push to
// replace it: "" for a plain push (no open PR for the branch). push is
// false when the PR holds every change of the branch already; lease is
// then the PR's head where it is a rebase whose record was lost.
func pushLease(ctx context.Context, c *hooks.Call, f forge.Forge, g *gitx.Repo, branch string) (lease string, push bool, o *hooks.Outcome) {
	n := prNumber(c)
	if n == 0 {
		return "", true, nil
	}
	pr, err := f.PR(ctx, n)
	switch {
	case errors.Is(err, forge.ErrNotFound):
		return "", true, nil // gone: create_pr opens another
	case err != nil:
		fail := forgeFailure(c, fmt.Sprintf("reading PR #%d before pushing %s", n, branch), err)
		return "", false, &fail
	case pr.State != forge.StateOpen || pr.Branch != branch || pr.HeadSHA == "":
		return "", true, nil
	}
	if n, err := g.CountNew(ctx, pr.HeadSHA, "refs/heads/"+branch); err == nil && n == 0 {
		// The PR already holds every change of the branch (agenttree
		// rebased it there): nothing to push, and nothing to overwrite.
		// A head the branch never held, and not the rebase recorded, is
		// that rebase with its record lost: returned, to be recorded and
		// told as check_conflicts would have.
		if c.Issue.Outputs["rebased_to"] != pr.HeadSHA && !held.Includes(ctx, g, branch, pr.HeadSHA) {
			return pr.HeadSHA, false, nil
		}
		return "", false, nil
	}
	if ownRebase(ctx, c, g, pr, branch) {
		return "", false, nil
	}
	if held.Includes(ctx, g, branch, pr.HeadSHA) {
		return pr.HeadSHA, true, nil
	}
	if held.Rebased(ctx, g, pr.HeadSHA, remote(c)+"/"+pr.Base, branch) {
		return pr.HeadSHA, false, nil
	}
	if err := ctx.Err(); err != nil {
		fail := hooks.FailAs(hooks.ClassTimeout, "pushing %s: %v", branch, err)
		return "", false, &fail
	}
	fail := hooks.Failf("%s", foreignHead(c, pr))
	return "", false, &fail
}

// ownRebase reports whether the PR's head is agenttree's own rebase of
// the branch (check_conflicts or rebase pushed it, from rebased_from to
// rebased_to) and the branch holds nothing that rebase did not take: the
// agent has not pulled it yet, which its message asked, and there is
// nothing to push. A rebase drops what the base already has, so the
// rebased commits need not match the branch's patch for patch.
func ownRebase(ctx context.Context, c *hooks.Call, g *gitx.Repo, pr *forge.PR, branch string) bool {
	from, to := c.Issue.Outputs["rebased_from"], c.Issue.Outputs["rebased_to"]
	if from == "" || to != pr.HeadSHA {
		return false
	}
	n, err := g.CountNew(ctx, from, "refs/heads/"+branch)
	return err == nil && n == 0
}

// foreignHead says that the PR's head holds commits the work tree never
// had, and what to run.
func foreignHead(c *hooks.Call, pr *forge.PR) string {
	return fmt.Sprintf("PR #%d's branch %s is at %s, which your branch %s never held: someone else pushed to it (or agenttree rebased it and asked you to pull). "+
		"Nothing was pushed. Bring their commits into your branch (`git pull --rebase %s %s`), then run `agenttree next`",
		pr.Number, pr.Branch, gitx.ShortSHA(pr.HeadSHA), pr.Branch, remote(c), pr.Branch)
}

// pushRefused says why a push of branch failed and what to run about it.
func pushRefused(c *hooks.Call, branch, lease string, err error) string {
	rem := remote(c)
	switch {
	case errors.Is(err, gitx.ErrLeaseRejected):
		// git's own words add nothing to this.
		return fmt.Sprintf("pushing %s to %s was refused: the branch moved there since the forge reported it at %s, so someone else pushed to it. "+
			"Nothing was overwritten. Bring their commits into your branch (`git pull --rebase %s %s`), then run `agenttree next`",
			branch, rem, gitx.ShortSHA(lease), rem, branch)
	case errors.Is(err, gitx.ErrPushRejected), errors.Is(err, gitx.ErrNoRef):
		return err.Error() // says what git refused, or what is missing, and what to run
	}
	return fmt.Sprintf("pushing %s to %s: %v; make sure the branch exists and has your commits", branch, rem, err)
}

// pushBranchHook pushes the issue's branch from the work tree it runs in
// (push_branch): with an open PR the forge's head is the lease, as
// create_pr's push (pushBranch); without a forge to ask, or no PR, a plain
// push, which never overwrites. With state.nodes it runs in the agent's
// stage, on its node, so that the controller's create_pr finds the
// commits on the remote (docs/ARCHITECTURE.md §8, Nodes).
func pushBranchHook(ctx context.Context, c *hooks.Call) hooks.Outcome {
	g, o := gitOf(c)
	if o != nil {
		return *o
	}
	branch := c.Issue.Branch
	if branch == "" {
		return hooks.Failf("issue %d has no branch to push", c.Issue.ID)
	}
	out := hooks.Pass()
	if c.DryRun() {
		out.Message = fmt.Sprintf("would push %s", branch)
		return out
	}
	if c.Env != nil && c.Env.Forge != nil {
		if _, o := pushBranch(ctx, c, c.Env.Forge, g, branch); o != nil {
			return *o
		}
	} else if err := g.Push(ctx, remote(c), branch, ""); err != nil {
		return hooks.Failf("%s", pushRefused(c, branch, "", err))
	}
	out.Message = fmt.Sprintf("pushed %s to %s", branch, remote(c))
	return out
}

// takeBranch brings the branch here as the agent's node pushed it
// (state.nodes: push_branch; docs/ARCHITECTURE.md §8, Nodes): fetched
// from the remote, then the local branch made, or moved forward, to it.
// A local branch ahead of it (this is the agent's host) or apart from it
// is left as it is, for the push to sort out (pushBranch).
func takeBranch(ctx context.Context, c *hooks.Call, g *gitx.Repo, branch string) *hooks.Outcome {
	tracking := "refs/remotes/" + remote(c) + "/" + branch
	if err := g.Fetch(ctx, remote(c), "+refs/heads/"+branch+":"+tracking); err != nil {
		o := hooks.Failf("%s is not on %s as the agent's node pushes it (push_branch in the agent's stage): %v; run `agenttree next` again where the agent works", branch, remote(c), err)
		return &o
	}
	pushed, err := g.RevParse(ctx, tracking)
	if err != nil {
		o := hooks.Failf("reading %s: %v", tracking, err)
		return &o
	}
	local, err := g.RevParse(ctx, "refs/heads/"+branch)
	switch {
	case errors.Is(err, gitx.ErrNoRef):
		err = g.CreateRef(ctx, "refs/heads/"+branch, pushed)
	case err != nil || local == pushed:
	default:
		if ok, aerr := g.IsAncestor(ctx, local, pushed); aerr != nil || ok {
			err = errors.Join(aerr, g.UpdateRef(ctx, "refs/heads/"+branch, pushed, local))
		}
	}
	if err != nil {
		o := hooks.Failf("taking %s as the agent's node pushed it: %v", branch, err)
		return &o
	}
	return nil
}
