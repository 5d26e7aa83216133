package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/sandbox"
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
	host := &gitx.Repo{Dir: m.repo()}
	if err := m.fetch(ctx, host); err != nil {
		return nil, err
	}
	dir := m.cfg().WorktreesDir()
	path := filepath.Join(dir, filepath.Base(iss.Branch))
	switch branch, err := cloneBranch(path); {
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

// headSize bounds what cloneBranch reads of .git/HEAD: a symbolic ref
// is one short line.
const headSize = 4096

// cloneBranch is the branch the clone at path has checked out, read from
// its .git/HEAD as a file, with no git running: the clone's config and
// hooks are an agent's. fs.ErrNotExist: nothing is at path. What an
// agent can swap in does not take the read out of the clone: it is
// opened beneath path (os.Root), and a symlink for .git or HEAD is
// refused.
func cloneBranch(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is %s, not a directory; move it aside, and start the agent again", path, kind(fi.Mode()))
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	notClone := func(why string) error {
		return fmt.Errorf("%s is not a clone agenttree made (%s); move it aside, and start the agent again", path, why)
	}
	gi, err := root.Lstat(".git")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", notClone("it has no .git")
	case err != nil:
		return "", err
	case gi.Mode().IsRegular():
		return "", notClone("its .git is a file: a linked worktree of the host's repository, made before agents in containers got clones; `git worktree remove` it")
	case !gi.IsDir():
		return "", notClone(".git is " + kind(gi.Mode()))
	}
	hi, err := root.Lstat(filepath.Join(".git", "HEAD"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", notClone("it has no .git/HEAD")
	case err != nil:
		return "", err
	case !hi.Mode().IsRegular():
		return "", notClone(".git/HEAD is " + kind(hi.Mode()))
	}
	f, err := root.Open(filepath.Join(".git", "HEAD"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, headSize))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Join(path, ".git", "HEAD"), err)
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/")
	if !ok || ref == "" {
		return "", fmt.Errorf("%s is on no branch (HEAD is detached: a rebase under way?); finish it in the agent's container, and start the agent again", path)
	}
	return ref, nil
}

// takeFromBox fetches rec's branch from its agent's clone, in a
// container, into the host's repository.
func (m *Manager) takeFromBox(ctx context.Context, box sandbox.Box, rec *Record) error {
	if err := isCloneDir(rec.Worktree); err != nil {
		return fmt.Errorf("take issue %d's work: %w", rec.Issue, err)
	}
	uploadPack, err := box.UploadPack(rec.Worktree)
	if err != nil {
		return fmt.Errorf("take issue %d's work: %w", rec.Issue, err)
	}
	host := &gitx.Repo{Dir: m.repo()}
	if err := host.FetchUntrusted(ctx, rec.Worktree, uploadPack, "+refs/heads/"+rec.Branch+":refs/heads/"+rec.Branch); err != nil {
		return fmt.Errorf("take issue %d's work from its agent's clone %s (served by git in a container of %s): %w", rec.Issue, rec.Worktree, box, err)
	}
	return nil
}

// unsavedInBox says what work exists only in l's clone, whose agent ran
// in a container of box: changes not committed, asked of git in the
// agent's sandbox, and commits the clone's HEAD has that are on none of
// the remote's branches nor saved, counted in the host's repository
// after fetching HEAD from the clone (as TakeWork does) into a ref of
// its own, deleted afterwards.
func (m *Manager) unsavedInBox(ctx context.Context, repo *gitx.Repo, box sandbox.Box, l *leftover, saved []string, elsewhere string) (refusal, error) {
	if err := isCloneDir(l.clone); err != nil {
		return refusal{}, err
	}
	todo := "commit, and run `agenttree next` for the controller to take it, or remove it yourself (`rm -rf " + shellQuote(l.clone) + "`)"
	out, err := box.Git(ctx, l.clone, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return refusal{}, err
	}
	if changes := gitx.ParseStatus(out); len(changes) > 0 {
		return refusal{Uncommitted, fmt.Sprintf("uncommitted work in %s (%s); %s", l.clone, files(changes), todo)}, nil
	}
	uploadPack, err := box.UploadPack(l.clone)
	if err != nil {
		return refusal{}, err
	}
	ref := "refs/agenttree/clean/" + strconv.Itoa(l.id)
	if err := repo.FetchUntrusted(ctx, l.clone, uploadPack, "+HEAD:"+ref); err != nil {
		return refusal{}, fmt.Errorf("fetch the HEAD of %s: %w", l.clone, err)
	}
	defer func() {
		if err := repo.DeleteRef(context.WithoutCancel(ctx), ref, ""); err != nil {
			m.log().Warn("delete a ref clean made", "ref", ref, "err", err)
		}
	}()
	n, err := repo.Unpushed(ctx, ref, saved...)
	if err != nil {
		return refusal{}, err
	}
	if n > 0 {
		return refusal{Unpushed, fmt.Sprintf("%s in %s on none of %s; %s", commits(n), l.clone, elsewhere, todo)}, nil
	}
	return refusal{}, nil
}

// kind says what a file of mode m is, for people.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a file"
	}
	return "a " + m.Type().String() + " file"
}

// isCloneDir checks that path is a directory, not a symlink.
func isCloneDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a directory; remove it, and start the agent again", path, kind(fi.Mode()))
	}
	return nil
}
