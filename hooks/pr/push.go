package pr

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
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
// the branch (ownRebase, rebasedBranch).
func pushBranch(ctx context.Context, c *hooks.Call, f forge.Forge, g *gitx.Repo, branch string) *hooks.Outcome {
	lease, push, o := pushLease(ctx, c, f, g, branch)
	if o != nil || !push {
		return o
	}
	if err := g.Push(ctx, remote(c), branch, lease); err != nil {
		if lease == "" && errors.Is(err, gitx.ErrPushRejected) && pushedRebase(ctx, c, g, branch) {
			return nil
		}
		o := hooks.Failf("%s", pushRefused(c, branch, lease, err))
		return &o
	}
	return nil
}

// pushedRebase reports whether the remote branch, which refused a push
// with no PR to lease on, is the branch rebased onto the base
// (rebasedBranch): a pass killed after check_conflicts pushed its rebase
// records nothing, not even the PR it opened, so the next create_pr
// pushes plainly over agenttree's own rebase. Nothing is to be pushed;
// EnsurePR finds the PR.
func pushedRebase(ctx context.Context, c *hooks.Call, g *gitx.Repo, branch string) bool {
	rem, base := remote(c), prBase(c)
	tracking := "refs/remotes/" + rem + "/" + branch
	if err := g.Fetch(ctx, rem, "+refs/heads/"+branch+":"+tracking, "+refs/heads/"+base+":refs/remotes/"+rem+"/"+base); err != nil {
		return false
	}
	head, err := g.RevParse(ctx, tracking)
	return err == nil && rebasedBranch(ctx, c, g, head, base, branch)
}

// pushLease is the head the remote branch must be at for the push to
// replace it: "" for a plain push (no open PR for the branch). push is
// false when the PR holds every change of the branch already.
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
		return "", false, nil
	}
	if ownRebase(ctx, c, g, pr, branch) {
		return "", false, nil
	}
	if includes(ctx, g, branch, pr.HeadSHA) {
		return pr.HeadSHA, true, nil
	}
	if rebasedBranch(ctx, c, g, pr.HeadSHA, pr.Base, branch) {
		return "", false, nil
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

// rebasedBranch reports whether head, the PR's, which the branch never
// held, is the branch rebased onto base where no record says agenttree
// rebased it (ownRebase): a controller killed between a rebase's push and
// the record of it leaves the head unknown to the issue (checkConflicts).
// It stands on a base commit the branch does not have (a rebase moves
// the branch on; a branch rewritten where it stood is the agent's to
// push), and its tree is what merging the branch into that commit makes:
// all of the branch's changes and nothing else, so that no push is
// needed and nothing of anyone's is lost by making none.
func rebasedBranch(ctx context.Context, c *hooks.Call, g *gitx.Repo, head, base, branch string) bool {
	onto, err := g.MergeBase(ctx, head, remote(c)+"/"+base)
	if err != nil {
		return false
	}
	if on, err := g.IsAncestor(ctx, onto, "refs/heads/"+branch); err != nil || on {
		return false
	}
	want, err := g.MergeTree(ctx, onto, "refs/heads/"+branch)
	if err != nil {
		return false
	}
	got, err := g.TreeOf(ctx, head)
	return err == nil && got == want
}

// foreignHead says that the PR's head holds commits the work tree never
// had, and what to run.
func foreignHead(c *hooks.Call, pr *forge.PR) string {
	return fmt.Sprintf("PR #%d's branch %s is at %s, which your branch %s never held: someone else pushed to it (or agenttree rebased it and asked you to pull). "+
		"Nothing was pushed. Bring their commits into your branch (`git pull --rebase %s %s`), then run `agenttree next`",
		pr.Number, pr.Branch, gitx.ShortSHA(pr.HeadSHA), pr.Branch, remote(c), pr.Branch)
}

// reflogDepth bounds how far back includes looks: a rewrite the agent
// just made is one or two entries back.
const reflogDepth = 50

// includes reports whether the local branch holds commit sha now or held
// it before a rewrite: sha is reachable from its tip or from one of its
// recent reflog entries. A commit the work tree does not have at all was
// never held; neither was one older than the reflog goes.
func includes(ctx context.Context, g *gitx.Repo, branch, sha string) bool {
	ref := "refs/heads/" + branch
	if ok, err := g.IsAncestor(ctx, sha, ref); err != nil || ok {
		return ok
	}
	for i := 1; i <= reflogDepth; i++ {
		ok, err := g.IsAncestor(ctx, sha, fmt.Sprintf("%s@{%d}", ref, i))
		if err != nil || ok {
			return ok
		}
	}
	return false
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
		if o := pushBranch(ctx, c, c.Env.Forge, g, branch); o != nil {
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
