package gitx

import (
	"context"
	"fmt"
	"strings"
)

// What removing a work tree or a branch would lose: work that exists
// only there.

// Unpushed counts the commits of rev that no remote-tracking branch has,
// nor any of also (refs/heads/main): git rev-list --count rev --not
// --remotes also... They exist nowhere else, and deleting what holds rev
// loses them. It is as fresh as the last fetch.
func (r *Repo) Unpushed(ctx context.Context, rev string, also ...string) (int, error) {
	return r.count(ctx, append([]string{rev}, also...), append(append([]string{rev, "--not", "--remotes"}, also...), "--")...)
}

// Changes lists the paths whose work tree or index differs from HEAD,
// untracked files included and ignored ones not, as git status names
// them; none: the work tree is clean.
func (r *Repo) Changes(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	return parseStatus(out), nil
}

// parseStatus reads `git status --porcelain -z`: "XY path" fields, a
// rename or copy (X or Y is R or C) followed by a field with its source.
func parseStatus(out string) []string {
	var paths []string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if strings.ContainsAny(f[:2], "RC") {
			i++ // the source path
		}
	}
	return paths
}

// WorktreeRemoveIfClean removes the work tree at path as `git worktree
// remove` does without --force: git refuses one with changes or untracked
// files (ignored ones go with it), and a locked one.
func (r *Repo) WorktreeRemoveIfClean(ctx context.Context, path string) error {
	if strings.HasPrefix(path, "-") {
		return fmt.Errorf("bad work tree path %q", path)
	}
	_, err := r.Run(ctx, "worktree", "remove", path)
	return err
}
