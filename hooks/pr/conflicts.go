package pr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/pr/internal/held"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/textsafe"
)

var autoRebaseParam = hooks.Bool("auto_rebase",
	"rebase the branch onto its base when it is behind or conflicts, and push it; unset: conflict_handling.auto_rebase")

// checkConflicts asks git whether the PR's head merges cleanly into its
// base. With auto_rebase the branch is also kept on top of its base, so
// what CI tests is what the merge will produce. A conflict left is a
// failure of ClassConflict; what it leads to (a step back, a person) is
// the entry's on_conflict or on_failure, which the engine applies.
func checkConflicts(ctx context.Context, c *hooks.Call) hooks.Outcome {
	pr, g, o := prAndGit(ctx, c)
	if o != nil {
		return *o
	}
	rem := remote(c)
	if err := g.Fetch(ctx, rem); err != nil {
		return forgeFailure(c, "fetching "+rem, err)
	}
	base := rem + "/" + pr.Base
	files, err := g.ConflictFiles(ctx, base, pr.HeadSHA)
	if err != nil {
		return hooks.Failf("checking %s against %s for conflicts: %v", gitx.ShortSHA(pr.HeadSHA), base, err)
	}
	auto := autoRebaseParam.Or(c, c.Settings().Conflicts.AutoRebase)
	// The head it passed on, so that the engine sees a head it did not
	// know (a rebase whose record a crash lost, a push): the entry's
	// earlier hooks then run again on it.
	clean := withOutputs(hooks.Pass(), map[string]string{"conflict_files": "", "head_sha": pr.HeadSHA})
	if len(files) == 0 {
		if !auto {
			return clean
		}
		if upToDate, err := g.IsAncestor(ctx, base, pr.HeadSHA); err != nil || upToDate {
			return clean
		}
	} else if !auto {
		return conflictFailure(conflictReason(c, pr, files), files)
	}
	head, o := rebaseOrConflict(ctx, c, g, pr, base)
	if o != nil {
		return *o
	}
	return rebasedWaitsForCI(c, pr, head, files)
}

// rebasedWaitsForCI is check_conflicts after a rebase: the rebased head is
// new code, so nothing may pass on it until CI has run there, and this
// check waits (the next call finds it up to date).
func rebasedWaitsForCI(c *hooks.Call, pr *forge.PR, head string, conflicted []string) hooks.Outcome {
	out := hooks.Pending(c.Settings().CIPolling.PollInterval,
		fmt.Sprintf("rebased %s onto %s (now %s); CI must pass on the new head", pr.Branch, pr.Base, gitx.ShortSHA(head)))
	out.Outputs = rebasedOutputs(pr.HeadSHA, head)
	out.Send = rebaseNotice(c, pr, head, conflicted)
	return out
}

// rebaseNotice tells the agent, whose branch a rebase of agenttree's
// rewrote, to pull it (the engine queues it), unless the config says not
// to.
func rebaseNotice(c *hooks.Call, pr *forge.PR, head string, conflicted []string) []string {
	if !c.Settings().Conflicts.NotifyOnRebase {
		return nil
	}
	why := "it was behind " + pr.Base
	if len(conflicted) > 0 {
		why = "it conflicted in " + strings.Join(conflicted, ", ")
	}
	return []string{fmt.Sprintf("agenttree rebased your branch %s onto %s (now %s) because %s; pull it before you change anything: `git pull --rebase %s %s`",
		pr.Branch, pr.Base, gitx.ShortSHA(head), why, remote(c), pr.Branch)}
}

// rebasedOutputs are the outputs of a rebase agenttree pushed, from head
// from to head to: rebased_from and rebased_to let create_pr tell its own
// rebase from someone else's push while the agent has not pulled it yet.
func rebasedOutputs(from, to string) map[string]string {
	return map[string]string{"conflict_files": "", "head_sha": to, "rebased_from": from, "rebased_to": to}
}

// rebase rebases the PR's branch onto its base and pushes it.
func rebase(ctx context.Context, c *hooks.Call) hooks.Outcome {
	pr, g, o := prAndGit(ctx, c)
	if o != nil {
		return *o
	}
	if rem := remote(c); !c.DryRun() {
		if err := g.Fetch(ctx, rem); err != nil {
			return hooks.Failf("fetching %s: %v", rem, err)
		}
	}
	head, o := rebaseOrConflict(ctx, c, g, pr, pr.Base)
	if o != nil {
		return *o
	}
	out := withOutputs(hooks.Pass(), rebasedOutputs(pr.HeadSHA, head))
	out.Message = fmt.Sprintf("rebased %s onto %s (now %s)", pr.Branch, pr.Base, gitx.ShortSHA(head))
	return out
}

// prAndGit loads the PR and git in its work tree.
func prAndGit(ctx context.Context, c *hooks.Call) (*forge.PR, *gitx.Repo, *hooks.Outcome) {
	_, pr, o := openPR(ctx, c)
	if o != nil {
		return nil, nil, o
	}
	g, o := gitOf(c)
	if o != nil {
		return nil, nil, o
	}
	return pr, g, nil
}

// rebaseOrConflict rebases the PR's branch (rebaseOnto) and returns its
// new head, or the outcome that ends the hook instead: what a dry run
// would do, a failure, or the conflict. onto names the base for people.
func rebaseOrConflict(ctx context.Context, c *hooks.Call, g *gitx.Repo, pr *forge.PR, onto string) (string, *hooks.Outcome) {
	var o hooks.Outcome
	if c.DryRun() {
		o = hooks.Pending(0, fmt.Sprintf("would rebase %s onto %s", pr.Branch, onto))
		return "", &o
	}
	head, conflicts, err := rebaseOnto(ctx, c, g, pr)
	var host hostGitError
	switch {
	case errors.As(err, &host):
		// Of the forge's class, whatever git's error (its time limit
		// too): five in a row call a person (polling.ForgeTrouble),
		// rather than a wait that never ends.
		o = pendingAs(hooks.ClassForge, c.Settings().CIPolling.PollInterval, fmt.Sprintf("rebasing %s on the host failed (will retry): %v", pr.Branch, err))
	case err != nil:
		o = hooks.Failf("%v", err)
	case len(conflicts) > 0:
		o = conflictFailure(conflictReason(c, pr, conflicts), conflicts)
	default:
		return head, nil
	}
	return "", &o
}

// rebaseOnto rebases the branch onto the PR's base, as last
// fetched, in its work tree and pushes with a lease on the head the forge
// reported, so work pushed meanwhile is never overwritten.
func rebaseOnto(ctx context.Context, c *hooks.Call, g *gitx.Repo, pr *forge.PR) (newHead string, conflicts []string, err error) {
	rem := remote(c)
	if branch, err := g.CurrentBranch(ctx); err != nil || branch != pr.Branch {
		// The host (the controller, in the main checkout) rebases the PR's
		// head itself, away from any work tree, and pushes it with a
		// lease on that head: the agent's checkout is never touched, and
		// the agent is told to pull.
		return rebaseHead(ctx, c, g, pr)
	}
	// The push below replaces the PR's head, so the work tree must hold
	// that head, or have held it before the agent rewrote the branch:
	// commits pushed from elsewhere are never dropped.
	if !held.Includes(ctx, g, pr.Branch, pr.HeadSHA) {
		return "", nil, errors.New(foreignHead(c, pr))
	}
	if err := g.Rebase(ctx, rem+"/"+pr.Base); err != nil {
		var ce interface{ ConflictingFiles() []string }
		if errors.As(err, &ce) {
			return "", ce.ConflictingFiles(), nil
		}
		if errors.Is(err, forge.ErrConflict) {
			files, _ := g.ConflictFiles(ctx, rem+"/"+pr.Base, pr.HeadSHA)
			return "", files, nil
		}
		return "", nil, fmt.Errorf("rebasing onto %s/%s: %w", rem, pr.Base, err)
	}
	if err := g.Push(ctx, rem, pr.Branch, pr.HeadSHA); err != nil {
		return "", nil, fmt.Errorf("the rebase of %s stays local: %s", pr.Branch, pushRefused(c, pr.Branch, pr.HeadSHA, err))
	}
	head, err := g.RevParse(ctx, "HEAD")
	if err != nil {
		return "", nil, err
	}
	return head, nil, nil
}

// hostGitError is a rebase the host could not make, away from any work
// tree, for no fault of the branch (git's own race between two worktrees
// added to one repository at once, a lock, a temporary directory): tried
// again at the next poll, never sent to the agent to fix.
type hostGitError struct{ error }

func (e hostGitError) Unwrap() error { return e.error }

// rebaseHead rebases the PR's head onto its base, as last fetched,
// without a work tree, and pushes the result with a lease on that head.
func rebaseHead(ctx context.Context, c *hooks.Call, g *gitx.Repo, pr *forge.PR) (newHead string, conflicts []string, err error) {
	rem := remote(c)
	head, err := g.RebaseCommit(ctx, pr.HeadSHA, rem+"/"+pr.Base)
	if err != nil {
		var ce interface{ ConflictingFiles() []string }
		if errors.As(err, &ce) {
			return "", ce.ConflictingFiles(), nil
		}
		return "", nil, hostGitError{fmt.Errorf("rebasing %s onto %s/%s: %w", gitx.ShortSHA(pr.HeadSHA), rem, pr.Base, err)}
	}
	if err := g.PushCommit(ctx, rem, head, pr.Branch, pr.HeadSHA); err != nil {
		return "", nil, fmt.Errorf("the rebase of %s was not pushed: %s", pr.Branch, pushRefused(c, pr.Branch, pr.HeadSHA, err))
	}
	return head, nil, nil
}

// conflictFailure is a conflict the agent (or a person) resolves, with
// the facts a message about it uses.
func conflictFailure(reason string, files []string) hooks.Outcome {
	o := hooks.FailAs(hooks.ClassConflict, "%s", reason)
	// File names are the agent's: quoted when they hold anything but
	// plain text (a newline, shell syntax), so they stay names.
	o.Outputs = map[string]string{"conflict_files": textsafe.Names(files), "failure_reason": reason}
	return o
}

// conflictReason says what conflicts and how to resolve it.
func conflictReason(c *hooks.Call, pr *forge.PR, files []string) string {
	in := ""
	if len(files) > 0 {
		in = " in " + textsafe.Names(files)
	}
	rem := remote(c)
	return fmt.Sprintf("PR #%d conflicts with %s%s; on branch %s run `git fetch %s && git rebase %s/%s`, resolve the conflicts, "+
		"then run `agenttree next` (it pushes the rebased branch)", pr.Number, pr.Base, in, pr.Branch, rem, rem, pr.Base)
}

// forgeConflictFiles asks the forge which files the PR conflicts in, when
// it can tell; nil when it cannot.
func forgeConflictFiles(ctx context.Context, f forge.Forge, pr *forge.PR) []string {
	cl, ok := forge.As[forge.ConflictLister](f)
	if !ok {
		return nil
	}
	files, err := cl.ConflictFiles(ctx, pr.Number)
	if err != nil {
		return nil
	}
	return files
}

// prMergeable asks the forge whether the PR merges cleanly.
func prMergeable(ctx context.Context, c *hooks.Call) hooks.Outcome {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	switch {
	case pr.State == forge.StateMerged:
		return hooks.Pass()
	case pr.State == forge.StateClosed:
		return hooks.Failf("PR #%d is closed; reopen it or open a new one", pr.Number)
	}
	if pr.Mergeable == forge.Unknown {
		// GitHub works mergeability out in the background: give it a few
		// polls (abandoned if the head moves) before answering "later".
		known, ok := waitMergeable(ctx, f, pr)
		if !ok {
			return hooks.Pending(10*time.Second, fmt.Sprintf("the forge is still working out whether PR #%d merges cleanly", pr.Number))
		}
		pr = known
	}
	if pr.Mergeable == forge.Mergeable {
		return hooks.Pass()
	}
	files := forgeConflictFiles(ctx, f, pr)
	return conflictFailure(conflictReason(c, pr, files), files)
}

// waitMergeable gives a forge that computes mergeability in the background
// the chance to finish; ok is false when it has not.
func waitMergeable(ctx context.Context, f forge.Forge, pr *forge.PR) (*forge.PR, bool) {
	w, ok := forge.As[forge.MergeableWaiter](f)
	if !ok {
		return nil, false
	}
	known, err := w.WaitMergeable(ctx, pr.Number, pr.HeadSHA)
	if err != nil || known.Mergeable == forge.Unknown {
		return nil, false
	}
	return known, true
}
