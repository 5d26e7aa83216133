package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/sandbox"
	"github.com/agenttree/agenttree/sessions/workspace"
)

// An agent in a container works in a clone of its own too: a linked
// worktree's `.git` points at the host's git directory, which the
// container must not get to write. The host makes the clone while it is
// empty and its own (so running git there is safe), mirroring the host's
// view of the remote, then points its origin at sandbox.ContainerOrigin,
// where the container gets the host's git directory read-only. From the
// agent's first command on, what the clone holds is the agent's: the
// host never runs git there again. It reads .git/HEAD as a file to find
// the clone's branch, and asks git in a throwaway container of the
// agent's image for the rest (sandbox.Box). docs/SECURITY.md, "Agents in
// containers".

// containerClone finds or makes the clone issue iss's agent works in, in
// a container: at the worktrees directory, named as a worktree would be,
// on the issue's branch.
func (m *Manager) containerClone(ctx context.Context, iss *issues.Issue) (*worktree, error) {
	host := &gitx.Repo{Dir: m.Repo}
	if err := m.Fetch(ctx, host); err != nil {
		return nil, err
	}
	dir := m.cfg().WorktreesDir()
	path := filepath.Join(dir, filepath.Base(iss.Branch))
	switch branch, err := workspace.CloneBranch(path); {
	case err == nil && branch == iss.Branch:
		return &worktree{repo: host, path: path, clone: true}, nil
	case err == nil:
		return nil, fmt.Errorf("issue %d's clone %s is on branch %s, not the issue's %s; switch it back (`git switch %s` in the agent's container)",
			iss.ID, path, branch, iss.Branch, iss.Branch)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("issue %d's clone: %w", iss.ID, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the worktrees directory: %w", err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil, fmt.Errorf("make issue %d's clone: %w", iss.ID, err)
	}
	wt := &worktree{repo: host, path: path, clone: true, added: true}
	// Empty and the host's until the agent starts: git runs here as the
	// host this once.
	if err := m.fillClone(ctx, host, &gitx.Repo{Dir: path}, iss.Branch, sandbox.ContainerOrigin); err != nil {
		_ = wt.undo(ctx, iss.Branch)
		return nil, fmt.Errorf("clone the repository for issue %d: %w", iss.ID, err)
	}
	return wt, nil
}
