package cirun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agenttree/agenttree/internal/proc"
)

// runAsUser makes cmd run as a.User, if set, in a work tree handed over
// to that user. The CI command is the repository's code, from the
// agents' commits: as the runner's user it would have the host's
// authority over the state. Nothing falls back to the runner's user.
func (a Attempt) runAsUser(cmd *exec.Cmd) error {
	if a.User == "" {
		return nil
	}
	u, err := proc.LookupUser(a.User)
	if err != nil {
		return fmt.Errorf("sandbox: user:%s: %w; create the user or change the config's sandbox", a.User, err)
	}
	if err := proc.AsUser(cmd, u); errors.Is(err, proc.ErrNeedsRoot) {
		return fmt.Errorf("the controller must run as root to run repository code as %s (sandbox: user:%s): %w; "+
			"start the controller (or the command that started CI) as root", a.User, a.User, err)
	} else if err != nil {
		return err
	}
	// git refuses a work tree whose git directory (in the bare
	// repository, the host's) another user owns, unless told it is safe.
	cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0="+a.Worktree)
	return handOver(a.Worktree, u)
}

// handOver gives the checkout wt (NewWorktree's) to u and lets u reach
// it. Its temporary directory stays the host's, so u can neither rename
// the checkout nor put a link in its place for RemoveWorktree, which
// runs as the host, to follow. Every file is handed over while that
// directory is still closed to everyone else (NewWorktree makes it 0700),
// without following symlinks (the commit's own, which may point at the
// host's files): no process of u's can swap a directory for a link in
// the middle of the walk.
func handOver(wt string, u proc.User) error {
	if !madeByNewWorktree(wt) {
		return fmt.Errorf("hand %s over to %s: not a CI work tree", wt, u.Name)
	}
	tmp := filepath.Dir(wt)
	fi, err := os.Lstat(tmp)
	if err != nil {
		return fmt.Errorf("hand the work tree over to %s: %w", u.Name, err)
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("hand the work tree over to %s: %s is %s, not a directory closed to other users", u.Name, tmp, fi.Mode())
	}
	err = filepath.WalkDir(wt, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(u.UID), int(u.GID))
	})
	if err != nil {
		return fmt.Errorf("hand the work tree over to %s: %w", u.Name, err)
	}
	if err := os.Chmod(tmp, 0o711); err != nil {
		return fmt.Errorf("let %s reach its work tree: %w", u.Name, err)
	}
	return nil
}
