package gitx

import (
	"context"
	"fmt"
	"strings"
)

// checkBranch refuses branch names git would read as options or that are
// not valid branch names.
func (r *Repo) checkBranch(ctx context.Context, branch string) error {
	if strings.HasPrefix(branch, "-") {
		return fmt.Errorf("bad git branch name %q", branch)
	}
	if _, err := r.Run(ctx, "check-ref-format", "--branch", branch); err != nil {
		return fmt.Errorf("bad git branch name %q: %w", branch, err)
	}
	return nil
}

// WorktreeAddBranch checks branch out in a new work tree at path (which
// must not exist or be empty). A branch that does not exist is made at
// start first; created says so, for a caller that undoes what it made.
func (r *Repo) WorktreeAddBranch(ctx context.Context, path, branch, start string) (created bool, err error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return false, err
	}
	exists, err := r.RefExists(ctx, "refs/heads/"+branch)
	if err != nil {
		return false, err
	}
	if exists {
		_, err = r.Run(ctx, "worktree", "add", "--quiet", path, branch)
		return false, err
	}
	if err := checkRev(start); err != nil {
		return false, err
	}
	// --no-track: the branch is the issue's own, not a copy of start's.
	_, err = r.Run(ctx, "worktree", "add", "--quiet", "--no-track", "-b", branch, path, start)
	return err == nil, err
}
