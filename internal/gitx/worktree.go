package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// Worktree is one work tree of a repository, as `git worktree list` knows
// it.
type Worktree struct {
	Path string
	// Head is the commit checked out; empty for a bare repository and for
	// a branch with no commits yet.
	Head string
	// Branch is the branch checked out ("main"); empty when HEAD is
	// detached and for a bare repository.
	Branch   string
	Bare     bool
	Detached bool
	// Locked and Prunable say git keeps the entry from pruning, or would
	// prune it (its directory is gone).
	Locked   bool
	Prunable bool
}

// Worktrees lists the repository's work trees: the main one (or the bare
// repository) first, then the linked ones in git's order.
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.run(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseWorktrees(out), nil
}

// parseWorktrees reads `git worktree list --porcelain -z`: one attribute
// ("name" or "name value") per NUL-terminated field, each work tree
// starting with its path; the empty field that ends one says nothing.
func parseWorktrees(out string) []Worktree {
	var list []Worktree
	for _, field := range strings.Split(out, "\x00") {
		name, value, _ := strings.Cut(field, " ")
		if name == "worktree" {
			list = append(list, Worktree{Path: value})
			continue
		}
		if len(list) == 0 {
			continue
		}
		w := &list[len(list)-1]
		switch name {
		case "HEAD":
			if strings.Trim(value, "0") != "" { // all zeros: no commit yet
				w.Head = value
			}
		case "branch":
			w.Branch = strings.TrimPrefix(value, "refs/heads/")
		case "bare":
			w.Bare = true
		case "detached":
			w.Detached = true
		case "locked":
			w.Locked = true
		case "prunable":
			w.Prunable = true
		}
	}
	return list
}

// WorktreeFor returns the work tree that has branch checked out; ok is
// false when none has.
func (r *Repo) WorktreeFor(ctx context.Context, branch string) (wt Worktree, ok bool, err error) {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return Worktree{}, false, err
	}
	for _, w := range list {
		if w.Branch == branch && !w.Bare {
			return w, true, nil
		}
	}
	return Worktree{}, false, nil
}

// WorktreeAdd checks rev out, detached, in a new work tree at path (which
// must not exist or be empty).
func (r *Repo) WorktreeAdd(ctx context.Context, path, rev string) error {
	if err := checkRev(rev); err != nil {
		return err
	}
	_, err := r.Run(ctx, "worktree", "add", "--detach", "--quiet", path, rev)
	return err
}

// WorktreeRemove removes the work tree at path, changes and all, and
// forgets it; a work tree already gone is not an error.
func (r *Repo) WorktreeRemove(ctx context.Context, path string) error {
	_, err := r.Run(ctx, "worktree", "remove", "--force", "--force", path)
	if err != nil {
		// Deleted behind git's back, or never registered: clear what is left.
		if rmErr := os.RemoveAll(path); rmErr != nil {
			return rmErr
		}
		_, err = r.Run(ctx, "worktree", "prune")
	}
	return err
}

// WorktreePrune forgets work trees whose directories are gone.
func (r *Repo) WorktreePrune(ctx context.Context) error {
	_, err := r.Run(ctx, "worktree", "prune")
	return err
}

// RebaseCommit rebases commit head onto onto in a temporary work tree,
// detached, and returns the rebased commit: no branch and no work tree of
// anyone's moves, so an agent's checkout is never touched while it works.
// A conflict is a *ConflictError naming the files.
func (r *Repo) RebaseCommit(ctx context.Context, head, onto string) (string, error) {
	tmp, err := os.MkdirTemp("", "agenttree-rebase-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, "wt")
	defer func() {
		// Clean up even when ctx is what stopped the rebase.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout())
		defer cancel()
		_ = r.WorktreeRemove(cleanup, dir)
		_ = os.RemoveAll(tmp)
	}()
	if err := r.WorktreeAdd(ctx, dir, head); err != nil {
		return "", err
	}
	wt := &Repo{Dir: dir, Timeout: r.Timeout}
	if err := wt.Rebase(ctx, onto); err != nil {
		return "", err
	}
	return wt.RevParse(ctx, "HEAD")
}
