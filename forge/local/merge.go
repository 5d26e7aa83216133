package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/gitx"
)

// mergeAttempts bounds retries when the base branch moves while a merge is
// being made (someone pushed to it).
const mergeAttempts = 5

// Merge merges PR number into its base in the bare repository and marks it
// merged. squash makes one commit titled "<title> (#N)"; merge makes a merge
// commit; rebase replays the PR's commits on the base (a fast-forward when
// the branch is already on top of it). An empty method means merge, as on
// GitHub. The base is moved with a compare-and-swap, so a concurrent push
// to it is never lost. A conflict fails with an error wrapping
// forge.ErrConflict that lists the files. Merging a merged PR succeeds, and
// a PR whose changes are already in its base is marked merged with no new
// commit, which is also what makes a retry after a crash safe.
//
// deleteBranch deletes the branch only while it is still at the merged
// head: commits pushed after the merge are not thrown away.
func (f *Forge) Merge(ctx context.Context, number int, method forge.MergeMethod, deleteBranch bool, expectHead string) error {
	f.requests.Add(1)
	if method == "" {
		method = forge.MergeMerge
	}
	switch method {
	case forge.MergeSquash, forge.MergeMerge, forge.MergeRebase:
	default:
		return fmt.Errorf("merge local PR #%d: unknown merge method %q (use squash, merge or rebase)", number, method)
	}
	var merged *Record
	err := f.update(ctx, number, func(rec *Record) error {
		switch rec.State {
		case forge.StateMerged:
			merged = rec
			return errUnchanged
		case forge.StateClosed:
			return fmt.Errorf("merge local PR #%d: it is closed", number)
		}
		commit, head, err := f.mergeIntoBase(ctx, rec, method, expectHead)
		if err != nil {
			return fmt.Errorf("merge local PR #%d (%s into %s): %w", number, rec.Branch, rec.Base, err)
		}
		t := now()
		rec.State, rec.HeadSHA, rec.MergeCommit, rec.MergeMethod, rec.MergedAt = forge.StateMerged, head, commit, string(method), t
		merged = rec
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return err
	}
	if deleteBranch && merged != nil && merged.HeadSHA != "" {
		err := f.bare.DeleteRef(ctx, "refs/heads/"+merged.Branch, merged.HeadSHA)
		if err != nil && !errors.Is(err, gitx.ErrRefMoved) {
			return fmt.Errorf("local PR #%d merged, but deleting branch %s failed: %w", number, merged.Branch, err)
		}
	}
	return nil
}

// mergeIntoBase makes the merge and moves the base to it; it returns the
// base's new commit and the head that was merged. A base that moved in
// between is merged into again, a few times.
func (f *Forge) mergeIntoBase(ctx context.Context, rec *Record, method forge.MergeMethod, expectHead string) (commit, head string, err error) {
	for range mergeAttempts {
		commit, head, err = f.tryMerge(ctx, rec, method, expectHead)
		if !errors.Is(err, gitx.ErrRefMoved) {
			return commit, head, err
		}
	}
	return "", "", fmt.Errorf("base branch %s kept moving while merging; try again", rec.Base)
}

// tryMerge merges the branch head into the base as it is now. It fails
// with gitx.ErrRefMoved, and changes nothing, when the base moved while
// the merge was being made. When the base holds the head's changes
// already, the merge is the base itself and nothing moves.
func (f *Forge) tryMerge(ctx context.Context, rec *Record, method forge.MergeMethod, expectHead string) (commit, head string, err error) {
	head, err = f.mergeHead(ctx, rec, expectHead)
	if err != nil {
		return "", "", err
	}
	base, err := f.bare.RevParse(ctx, "refs/heads/"+rec.Base)
	if err != nil {
		return "", "", fmt.Errorf("base branch %s: %w", rec.Base, err)
	}
	tree, changed, err := f.mergedTree(ctx, rec, base, head)
	if err != nil {
		return "", "", err
	}
	if !changed {
		return base, head, nil
	}
	commit, err = f.makeMerge(ctx, rec, method, base, head, tree)
	if err != nil {
		return "", "", err
	}
	return commit, head, f.bare.UpdateRef(ctx, "refs/heads/"+rec.Base, commit, base)
}

// mergeHead is the head of rec's branch, which must be expectHead when
// that is given.
func (f *Forge) mergeHead(ctx context.Context, rec *Record, expectHead string) (string, error) {
	head, err := f.branchHead(ctx, rec.Branch)
	if err != nil {
		return "", err
	}
	if head == "" {
		return "", fmt.Errorf("branch %s is not in %s (%w); push it again", rec.Branch, f.bareDir, forge.ErrNotFound)
	}
	if expectHead != "" && head != expectHead {
		return "", fmt.Errorf("%w: expected %s, found %s", forge.ErrHeadChanged, expectHead, head)
	}
	return head, nil
}

// mergedTree is the tree of head merged into base; changed is false when
// that is base's own tree (the changes are in already). A conflict is a
// *gitx.ConflictError naming the branches.
func (f *Forge) mergedTree(ctx context.Context, rec *Record, base, head string) (tree string, changed bool, err error) {
	tree, err = f.bare.MergeTree(ctx, base, head)
	var cerr *gitx.ConflictError
	if errors.As(err, &cerr) {
		return "", false, &gitx.ConflictError{Op: fmt.Sprintf("merging %s into %s", rec.Branch, rec.Base), Files: cerr.Files}
	}
	if err != nil {
		return "", false, err
	}
	baseTree, err := f.bare.TreeOf(ctx, base)
	if err != nil {
		return "", false, err
	}
	return tree, tree != baseTree, nil
}

// makeMerge makes the commit the base will point at, touching no ref.
func (f *Forge) makeMerge(ctx context.Context, rec *Record, method forge.MergeMethod, base, head, tree string) (string, error) {
	switch method {
	case forge.MergeMerge:
		msg := fmt.Sprintf("Merge pull request #%d from %s\n\n%s", rec.Number, rec.Branch, rec.Title)
		return f.bare.CommitTree(ctx, tree, []string{base, head}, msg)
	case forge.MergeSquash:
		subjects, err := f.bare.Run(ctx, "log", "--reverse", "--format=* %s", base+".."+head, "--")
		if err != nil {
			return "", err
		}
		// The squashed commit is the PR author's work; the forge commits it.
		who, err := f.bare.Run(ctx, "log", "-1", "--format=%an%x00%ae", head, "--")
		if err != nil {
			return "", err
		}
		name, email, _ := strings.Cut(who, "\x00")
		msg := fmt.Sprintf("%s (#%d)\n\n%s", rec.Title, rec.Number, subjects)
		return f.bare.With("GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email).CommitTree(ctx, tree, []string{base}, msg)
	default:
		return f.rebase(ctx, rec, base, head)
	}
}

// rebase replays base..head onto base in a temporary work tree; merge-tree
// cannot replay single commits in git 2.39.
func (f *Forge) rebase(ctx context.Context, rec *Record, base, head string) (string, error) {
	if ok, err := f.bare.IsAncestor(ctx, base, head); err != nil || ok {
		return head, err
	}
	tmp, err := os.MkdirTemp("", "agenttree-merge-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	wt := filepath.Join(tmp, "pr-"+strconv.Itoa(rec.Number))
	if err := f.bare.WorktreeAdd(ctx, wt, head); err != nil {
		return "", err
	}
	defer func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = f.bare.WorktreeRemove(cleanup, wt)
	}()
	w := &gitx.Repo{Dir: wt, Timeout: f.bare.Timeout, Env: f.bare.Env}
	if err := w.Rebase(ctx, base); err != nil {
		var cerr *gitx.ConflictError
		if errors.As(err, &cerr) {
			return "", &gitx.ConflictError{Op: fmt.Sprintf("rebasing %s onto %s", rec.Branch, rec.Base), Files: cerr.Files}
		}
		return "", err
	}
	return w.HeadSHA(ctx)
}
