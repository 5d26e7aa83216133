package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
)

// issueWorkTree is where the issue's code is checked out: the directory
// commands run in (runDir) when it is on the issue's branch, else the
// linked worktree that has the branch, else the clone of the agent of
// another OS user (agent, under worktrees; sessions' agentClone). A gate
// must test the issue's code, never whatever another branch happens to
// hold.
func issueWorkTree(ctx context.Context, i *hooks.Issue, worktrees, agent string) (string, error) {
	dir := runDir(i)
	if i.Branch == "" {
		return dir, nil
	}
	repo := &gitx.Repo{Dir: dir}
	head, err := repo.CurrentBranch(ctx)
	switch {
	case err == nil && head == i.Branch:
		return dir, nil
	case errors.Is(err, gitx.ErrNotRepository):
		return dir, nil // not a git work tree: nothing to match
	case err != nil:
		head = "(detached HEAD: a rebase in progress?)"
	}
	if wt, ok, err := repo.WorktreeFor(ctx, i.Branch); err == nil && ok {
		return wt.Path, nil
	}
	if agent != "" {
		if clone, err := agentClone(ctx, filepath.Join(worktrees, filepath.Base(i.Branch)), agent, i.Branch); err == nil {
			return clone, nil
		}
	}
	return "", fmt.Errorf("%s is on branch %s, and no worktree has issue %d's branch %s checked out; check it out (`git switch %s`, or `git worktree add ../%s %s`) so its gates test its code",
		dir, head, i.ID, i.Branch, i.Branch, i.Branch, i.Branch)
}

// runDir is where commands run: the work tree, else the repository that
// holds the issue directory (<repo>/_agenttree/issues/NNN).
func runDir(i *hooks.Issue) string {
	if i.WorkDir != "" {
		return i.WorkDir
	}
	dir := absPath(i.Dir)
	for d := dir; d != ""; d = filepath.Dir(d) {
		if filepath.Base(d) == "_agenttree" {
			return filepath.Dir(d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return dir
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// agentClone is dir when it is a clone owned by the OS user agent on
// branch, asked of git running as that user: the clone's config and
// hooks are the agent's, never run as the host.
func agentClone(ctx context.Context, dir, agent, branch string) (string, error) {
	u, err := proc.LookupUser(agent)
	if err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if uid, ok := proc.OwnerUID(fi); !fi.IsDir() || !ok || uid != u.UID {
		return "", fmt.Errorf("%s is not a directory of %s", dir, agent)
	}
	head, err := (&gitx.Repo{Dir: dir, As: &u}).CurrentBranch(ctx)
	if err != nil {
		return "", err
	}
	if head != branch {
		return "", fmt.Errorf("%s is on branch %s, not %s", dir, head, branch)
	}
	return dir, nil
}
