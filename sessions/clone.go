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
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/sessions/workspace"
)

// An agent of another OS user (`sandbox: user:NAME`) works in a clone of
// its own, not a linked worktree: a linked worktree shares the host's
// object store and refs, which the agent cannot write without the host's
// repository being opened to it. The clone is the agent's from the first
// byte (its directory made empty by the host and given to the agent, then
// filled by git running as the agent); the host never runs git in it as
// itself (its config and hooks are the agent's), and takes the agent's
// commits by fetching them with upload-pack running as the agent
// (gitx.FetchFromAgent). docs/SECURITY.md, "Agents as another OS user".

// agentUploadPack is what the agent's git runs to read the host's
// repository, which another user (the host) owns: upload-pack is the
// part of git made to serve repositories one does not trust, and this is
// the agent's own process trusting the host's, never the other way round.
const agentUploadPack = "git -c safe.directory=* upload-pack"

// agentClone finds or makes the clone issue iss's agent, OS user u, works
// in: at the worktrees directory, named as a worktree would be, on the
// issue's branch.
func (m *Manager) agentClone(ctx context.Context, iss *issues.Issue, u *proc.User) (*worktree, error) {
	host := &gitx.Repo{Dir: m.Repo}
	if err := m.Fetch(ctx, host); err != nil {
		return nil, err
	}
	dir := m.cfg().WorktreesDir()
	path := filepath.Join(dir, filepath.Base(iss.Branch))
	agent := &gitx.Repo{Dir: path, As: u}
	switch err := workspace.OwnedBy(path, u); {
	case err == nil:
		branch, err := agent.CurrentBranch(ctx)
		if err != nil {
			return nil, fmt.Errorf("issue %d's clone %s: %w", iss.ID, path, err)
		}
		if branch != iss.Branch {
			return nil, fmt.Errorf("issue %d's clone %s is on branch %s, not the issue's %s; switch it back (`git switch %s` there, as %s)",
				iss.ID, path, branch, iss.Branch, iss.Branch, u.Name)
		}
		return &worktree{repo: host, path: path, clone: true}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the worktrees directory: %w", err)
	}
	// Made empty here and given to the agent at once: the only tree root
	// hands over is one it has just made, with nothing in it to follow.
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil, fmt.Errorf("make issue %d's clone: %w", iss.ID, err)
	}
	wt := &worktree{repo: host, path: path, clone: true, added: true}
	if err := os.Lchown(path, int(u.UID), int(u.GID)); err != nil {
		_ = wt.undo(ctx, iss.Branch)
		return nil, fmt.Errorf("give issue %d's clone to %s: %w", iss.ID, u.Name, err)
	}
	if err := m.fillClone(ctx, host, agent, iss.Branch, ""); err != nil {
		_ = wt.undo(ctx, iss.Branch)
		return nil, fmt.Errorf("clone the repository for issue %d as %s: %w", iss.ID, u.Name, err)
	}
	return wt, nil
}

// fillClone makes the agent's clone in clone.Dir, running git as
// clone.As (the agent, or the host in an empty directory of its own):
// its origin is the host's repository, whose view of the remote
// (refs/remotes/<remote>/*) it mirrors, so that `git fetch origin && git
// rebase origin/main` there rebases on what the host fetched; it starts
// on branch from the host's copy of it, else where a worktree would.
// With origin, the clone's origin is that path at the end (where a
// container finds the host's repository); else the host's repository's
// own path.
func (m *Manager) fillClone(ctx context.Context, host, clone *gitx.Repo, branch, origin string) error {
	// The clone's remote is the host's repository, under the name a
	// clone gives its remote.
	const remote = gitx.DefaultRemote
	mirror := "+refs/heads/*:refs/remotes/" + remote + "/*"
	if _, err := host.RemoteURL(ctx, m.Remote); err == nil {
		mirror = "+refs/remotes/" + m.Remote + "/*:refs/remotes/" + remote + "/*"
	}
	start, err := m.startPoint(ctx, host, branch)
	if err != nil {
		return err
	}
	// The host's start point, under the name the clone has for it; the
	// host's own branch (work taken in before) first.
	from := "+" + start + ":refs/agenttree/start"
	if local, _ := host.RefExists(ctx, "refs/heads/"+branch); local {
		from = "+refs/heads/" + branch + ":refs/agenttree/start"
	}
	uploadPack := []string{"config", "remote." + remote + ".uploadpack", agentUploadPack}
	steps := [][]string{
		{"init", "--quiet"},
		{"config", "remote." + remote + ".url", host.Dir},
		{"config", "remote." + remote + ".fetch", mirror},
	}
	if origin == "" {
		// The agent reads the host's repository with it from the start.
		steps = append(steps, uploadPack)
	}
	steps = append(steps,
		[]string{"fetch", "--quiet", remote},
		[]string{"fetch", "--quiet", remote, from},
		[]string{"checkout", "--quiet", "-b", branch, "refs/agenttree/start"},
		[]string{"update-ref", "-d", "refs/agenttree/start"})
	if origin != "" {
		// The host's own fetches above used its own upload-pack; the
		// agent's, in its container, reads a repository it may not own.
		steps = append(steps, uploadPack, []string{"config", "remote." + remote + ".url", origin})
	}
	for _, args := range steps {
		if _, err := clone.Run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// TakeWork fetches the work on issue id's branch from its agent's clone
// into the host's repository (refs/heads/<branch>), when its agent is of
// another OS user or in a container: the host's gates, pushes and PR see
// what the agent committed. It does nothing for an agent that works in a
// linked worktree, whose commits are the host's already. Call it before
// the gates of the agent's `next`.
func (m *Manager) TakeWork(ctx context.Context, id int) error {
	rec, err := m.records().Get(id)
	if errors.Is(err, ErrNoSession) {
		return nil
	}
	if err != nil || !rec.Clone {
		return err
	}
	return workspace.Take(ctx, &gitx.Repo{Dir: m.Repo}, rec)
}

// Refresh brings the host's view of the remote up to date when issue
// id's agent works in a clone of its own, whose `origin` is the host's
// repository (a container's, read-only at sandbox.ContainerOrigin):
// before the agent is told to rebase on origin/main, that must be the
// remote's main, not what the host last fetched. Nothing for an agent in
// a linked worktree, which fetches from the remote itself.
func (m *Manager) Refresh(ctx context.Context, id int) error {
	rec, err := m.records().Get(id)
	if errors.Is(err, ErrNoSession) {
		return nil
	}
	if err != nil || !rec.Clone {
		return err
	}
	return m.Fetch(ctx, &gitx.Repo{Dir: m.Repo})
}

// handDocs gives issue id's documents directory to the agent's OS user u,
// who writes its stage documents there: owned by u, written by u alone
// (0755), rather than written by a group the agent would have to join.
// Only a directory the host owns (or u already does) is handed over; the
// host reads what u writes there beneath the directory, following no
// symlink out of it (hooks' os.Root).
func handDocs(dir string, mkdir func() error, u *proc.User) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := mkdir(); err != nil {
			return err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return err
	}
	uid, ok := proc.OwnerUID(fi)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (%s); move it aside, and start the agent again", dir, fi.Mode().Type())
	case !ok || uid == u.UID:
		return nil
	case int(uid) != os.Geteuid():
		return fmt.Errorf("%s is owned by uid %d, neither the host's nor the agent's user %s; move it aside, and start the agent again", dir, uid, u.Name)
	}
	if err := os.Lchown(dir, int(u.UID), int(u.GID)); err != nil {
		return fmt.Errorf("give the documents directory %s to %s: %w", dir, u.Name, err)
	}
	return os.Chmod(dir, 0o755)
}
