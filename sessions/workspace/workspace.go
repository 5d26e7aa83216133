// Package workspace is what the host knows of where an issue's agent
// works, apart from its session: a linked worktree of the host's
// repository, or, for an agent of another OS user or in a container, a
// clone of its own that the host handles without trusting it. The host
// never runs git in such a clone as itself (its config and hooks are
// the agent's): it checks what is there with Lstat and os.Root, reads
// the branch from .git/HEAD as a file, and takes the agent's commits
// with upload-pack running as the agent or in its container
// (docs/SECURITY.md, "Agents as another OS user", "Agents in
// containers").
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/sessions/records"
	"github.com/agenttree/agenttree/sessions/sandbox"
)

// SameDir reports whether a and b name one existing directory.
func SameDir(a, b string) bool {
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// SandboxUser is the user a record's sandbox ("user:NAME") names.
func SandboxUser(sandbox string) string {
	name, _ := strings.CutPrefix(sandbox, "user:")
	return name
}

// OwnedBy checks that path is a directory (not a symlink) that u owns;
// fs.ErrNotExist when there is nothing there.
func OwnedBy(path string, u *proc.User) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	uid, ok := proc.OwnerUID(fi)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (%s); remove it, and start the agent again", path, fi.Mode().Type())
	case ok && uid != u.UID:
		return fmt.Errorf("%s is owned by uid %d, not the agent's user %s; move it aside, and start the agent again", path, uid, u.Name)
	}
	return nil
}

// IsDir checks that the clone at path is a directory, not a symlink.
func IsDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a directory; remove it, and start the agent again", path, kind(fi.Mode()))
	}
	return nil
}

// headSize bounds what CloneBranch reads of .git/HEAD: a symbolic ref
// is one short line.
const headSize = 4096

// CloneBranch is the branch the clone at path has checked out, read from
// its .git/HEAD as a file, with no git running: the clone's config and
// hooks are an agent's. fs.ErrNotExist: nothing is at path. What an
// agent can swap in does not take the read out of the clone: it is
// opened beneath path (os.Root), and a symlink for .git or HEAD is
// refused.
func CloneBranch(path string) (string, error) {
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

// Take fetches the work on rec's branch from its agent's clone into host
// (refs/heads/<branch>): with upload-pack running as the agent's OS
// user, or in a container of the agent's image.
func Take(ctx context.Context, host *gitx.Repo, rec *records.Session) error {
	refspec := "+refs/heads/" + rec.Branch + ":refs/heads/" + rec.Branch
	if box, ok := sandbox.ContainerOf(rec.Sandbox); ok {
		if err := IsDir(rec.Worktree); err != nil {
			return fmt.Errorf("take issue %d's work: %w", rec.Issue, err)
		}
		uploadPack, err := box.UploadPack(rec.Worktree)
		if err != nil {
			return fmt.Errorf("take issue %d's work: %w", rec.Issue, err)
		}
		if err := host.FetchUntrusted(ctx, rec.Worktree, uploadPack, refspec); err != nil {
			return fmt.Errorf("take issue %d's work from its agent's clone %s (served by git in a container of %s): %w", rec.Issue, rec.Worktree, box, err)
		}
		return nil
	}
	u, err := proc.LookupUser(SandboxUser(rec.Sandbox))
	if err != nil {
		return fmt.Errorf("take issue %d's work from %s: %w", rec.Issue, rec.Worktree, err)
	}
	if err := OwnedBy(rec.Worktree, &u); err != nil {
		return fmt.Errorf("take issue %d's work: %w", rec.Issue, err)
	}
	if err := host.FetchFromAgent(ctx, rec.Worktree, u, refspec); err != nil {
		return fmt.Errorf("take issue %d's work from its agent's clone %s: %w", rec.Issue, rec.Worktree, err)
	}
	return nil
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
