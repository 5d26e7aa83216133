package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/workspace"
)

// worktree is an issue's worktree and what making it made, to undo.
type worktree struct {
	repo *gitx.Repo
	path string
	// added: the worktree is new; branchAt: so is its branch, made at
	// that commit.
	added    bool
	branchAt string
	// clone: the worktree is an agent's clone of its own (clone.go).
	clone bool
}

// worktree fetches, then finds the worktree that has iss's branch checked
// out, or adds one under the configured directory: on the branch, made
// from the remote's branch or, when there is none, the default branch.
func (m *Manager) worktree(ctx context.Context, iss *issues.Issue) (*worktree, error) {
	repo := &gitx.Repo{Dir: m.Repo}
	if err := m.Fetch(ctx, repo); err != nil {
		return nil, err
	}
	existing, ok, err := repo.WorktreeFor(ctx, iss.Branch)
	switch {
	case err != nil:
		return nil, fmt.Errorf("list the worktrees of %s: %w", repo.Dir, err)
	case ok && existing.Prunable:
		if err := repo.WorktreePrune(ctx); err != nil {
			return nil, err
		}
	case ok && workspace.SameDir(existing.Path, repo.Dir):
		return nil, fmt.Errorf("issue %d's branch %s is checked out in the main checkout %s; switch that to another branch (`git switch %s`) so the agent gets a worktree of its own",
			iss.ID, iss.Branch, existing.Path, m.cfg().DefaultBranch)
	case ok:
		return &worktree{repo: repo, path: existing.Path}, nil
	}
	dir := m.cfg().WorktreesDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the worktrees directory: %w", err)
	}
	wt := &worktree{repo: repo, path: filepath.Join(dir, filepath.Base(iss.Branch))}
	start, err := m.startPoint(ctx, repo, iss.Branch)
	if err != nil {
		return nil, err
	}
	made, err := repo.WorktreeAddBranch(ctx, wt.path, iss.Branch, start)
	if err != nil {
		return nil, fmt.Errorf("add a worktree for issue %d at %s: %w", iss.ID, wt.path, err)
	}
	wt.added = true
	if made {
		wt.branchAt, _ = repo.RevParse(ctx, "refs/heads/"+iss.Branch)
	}
	return wt, nil
}

// Fetch brings repo's copy of m.Remote's branches up to date; a
// repository without the remote works from what it has.
func (m *Manager) Fetch(ctx context.Context, repo *gitx.Repo) error {
	if _, err := repo.RemoteURL(ctx, m.Remote); errors.Is(err, gitx.ErrNoRemote) {
		return nil
	} else if err != nil {
		return err
	}
	if err := repo.Fetch(ctx, m.Remote); err != nil {
		return fmt.Errorf("fetch %s: %w", m.Remote, err)
	}
	return nil
}

// startPoint is where a new branch starts: the remote's copy of it, else
// the remote's default branch, else the local one.
func (m *Manager) startPoint(ctx context.Context, repo *gitx.Repo, branch string) (string, error) {
	for _, ref := range []string{
		"refs/remotes/" + m.Remote + "/" + branch,
		"refs/remotes/" + m.Remote + "/" + m.cfg().DefaultBranch,
		"refs/heads/" + m.cfg().DefaultBranch,
	} {
		ok, err := repo.RefExists(ctx, ref)
		if err != nil {
			return "", err
		}
		if ok {
			return ref, nil
		}
	}
	return "", fmt.Errorf("no branch %s in %s nor on %s to start issue branch %s from; set default_branch in %s",
		m.cfg().DefaultBranch, repo.Dir, m.Remote, branch, filepath.Base(m.cfg().File))
}

// undo removes what worktree made: the worktree, the branch if it is
// still where it was made (no work on it is lost), and the worktrees
// directory if that is left empty.
func (w *worktree) undo(ctx context.Context, branch string) error {
	if !w.added {
		return nil
	}
	if w.clone {
		// os.RemoveAll follows no symlink the agent may have put there.
		err := os.RemoveAll(w.path)
		_ = os.Remove(filepath.Dir(w.path)) // only when empty
		return err
	}
	err := w.repo.WorktreeRemove(ctx, w.path)
	if w.branchAt != "" {
		err = errors.Join(err, w.repo.DeleteRef(ctx, "refs/heads/"+branch, w.branchAt))
	}
	_ = os.Remove(filepath.Dir(w.path)) // only when empty
	return err
}
