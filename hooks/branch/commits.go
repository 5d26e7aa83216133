// Package branch holds has_commits, the gate that asks whether the
// issue's branch holds new work.
package branch

import (
	"context"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// Defs are the hooks about the issue's branch.
func Defs() []hooks.Def {
	return []hooks.Def{
		{HookSpec: stages.HookSpec{Name: "has_commits", Outputs: []string{"commit_count"},
			Doc:     "Passes when the issue's branch has commits that are not on the default branch, nor on the PR head CI last saw.",
			Example: "- has_commits:"}, Run: hasCommits},
	}
}

// hasCommits counts the commits on the issue's branch that are in none of
// the bases: the PR head agenttree last recorded (what CI last looked at,
// so work after a step back must be new work, pushed or not), and the
// default branch on origin and locally. Bases that do
// not exist are skipped; with none at all there is nothing to compare
// against. It counts the issue's branch, not whatever is checked out, so a
// work tree switched to another branch neither hides nor lends commits.
func hasCommits(ctx context.Context, c *hooks.Call) hooks.Outcome {
	dir := c.Issue.WorkDir
	if dir == "" {
		return hooks.Failf("has_commits: the issue has no work tree to look for commits in; start the issue so it gets one, %s", phrase.NextHint)
	}
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		return hooks.Failf("has_commits: %v; run the issue in its git work tree, %s", err, phrase.NextHint)
	}
	def := c.Issue.DefaultBranch
	if def == "" {
		def = "main"
	}
	branch, rev, o := branchRev(ctx, repo, c.Issue.Branch)
	if o != nil {
		return *o
	}
	bases := existing(ctx, repo, baseRefs(c.Issue.HeadSHA, def))
	if len(bases) == 0 {
		return hooks.Failf("has_commits: neither origin/%s nor %s exists in %s, so there is nothing to count %s's commits against; fetch the default branch (`git fetch origin %s`), %s",
			def, def, dir, branch, def, phrase.NextHint)
	}
	// A branch of its own was found by its commit; HEAD may have none yet.
	if rev == "HEAD" {
		if ok, _ := repo.RefExists(ctx, rev); !ok {
			return hooks.Failf("has_commits: %s has no commits at all; commit your work first, %s", dir, phrase.NextHint)
		}
	}
	n, err := repo.CountCommits(ctx, rev, bases...)
	if err != nil {
		return hooks.Failf("has_commits: cannot count commits in %s: %v", dir, err)
	}
	out := hooks.Pass()
	if n == 0 {
		out = hooks.Failf("no commits on %s beyond %s; commit your work first, %s", branch, shortRefs(bases), phrase.NextHint)
	}
	out.Outputs = map[string]string{"commit_count": strconv.Itoa(n)}
	return out
}

// baseRefs are the revisions whose commits are not new work: head (the
// PR head last recorded, if any) and the default branch def.
func baseRefs(head, def string) []string {
	var refs []string
	if head != "" {
		refs = append(refs, head)
	}
	return append(refs, "refs/remotes/origin/"+def, "refs/heads/"+def)
}

// existing keeps the refs that name a commit in repo.
func existing(ctx context.Context, repo *gitx.Repo, refs []string) []string {
	var out []string
	for _, ref := range refs {
		if ok, _ := repo.RefExists(ctx, ref); ok {
			out = append(out, ref)
		}
	}
	return out
}

// branchRev is the branch to count (its name, and the revision that names
// it): the issue's branch, or HEAD when the issue has none. A branch with
// no commits yet is counted as HEAD when it is checked out.
func branchRev(ctx context.Context, repo *gitx.Repo, branch string) (name, rev string, o *hooks.Outcome) {
	if branch == "" {
		return "HEAD", "HEAD", nil
	}
	if ok, _ := repo.RefExists(ctx, "refs/heads/"+branch); ok {
		return branch, "refs/heads/" + branch, nil
	}
	if head, _ := repo.CurrentBranch(ctx); head == branch {
		return branch, "HEAD", nil
	}
	fail := hooks.Failf("has_commits: branch %s does not exist in %s; create it with `git switch -c %s`, %s", branch, repo.Dir, branch, phrase.NextHint)
	return "", "", &fail
}

// shortRefs names refs as people write them: origin/main, main.
func shortRefs(refs []string) string {
	names := make([]string, len(refs))
	for i, ref := range refs {
		names[i] = strings.TrimPrefix(strings.TrimPrefix(ref, "refs/remotes/"), "refs/heads/")
		if !strings.HasPrefix(ref, "refs/") {
			names[i] = gitx.ShortSHA(ref) + " (the PR head CI last looked at)"
		}
	}
	return strings.Join(names, ", ")
}
