// Package held tells, with git, whether an issue's branch holds a head
// the forge reports for its PR: one it holds now or held before the agent
// rewrote it (its reflog), or one that is the branch rebased onto its
// base by agenttree where no record says so. The PR hooks ask it before
// a push replaces the PR's head: commits the branch never held are
// someone else's, and are never pushed over.
package held

import (
	"context"
	"fmt"

	"github.com/agenttree/agenttree/internal/gitx"
)

// reflogDepth bounds how far back Includes looks: a rewrite the agent
// just made is one or two entries back.
const reflogDepth = 50

// Includes reports whether the local branch holds commit sha now or held
// it before a rewrite: sha is reachable from its tip or from one of its
// recent reflog entries. A commit the work tree does not have at all was
// never held; neither was one older than the reflog goes.
func Includes(ctx context.Context, g *gitx.Repo, branch, sha string) bool {
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

// Rebased reports whether head, which the branch never held, is the
// branch rebased onto base (a ref, as "origin/main"): a controller killed
// between a rebase's push and the record of it leaves a head the issue
// does not know. It stands on a base commit the branch does not have (a
// rebase moves the branch on; a branch rewritten where it stood is the
// agent's to push), and its tree is what merging the branch into that
// commit makes: all of the branch's changes and nothing else, so that no
// push is needed and nothing of anyone's is lost by making none.
func Rebased(ctx context.Context, g *gitx.Repo, head, base, branch string) bool {
	ref := "refs/heads/" + branch
	onto, err := g.MergeBase(ctx, head, base)
	if err != nil {
		return false
	}
	if on, err := g.IsAncestor(ctx, onto, ref); err != nil || on {
		return false
	}
	want, err := g.MergeTree(ctx, onto, ref)
	if err != nil {
		return false
	}
	got, err := g.TreeOf(ctx, head)
	return err == nil && got == want
}
