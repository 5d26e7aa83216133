package hooks

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// hasCommits counts the commits on the issue's branch that are in none of
// the bases: the issue branch as last pushed (so work after a step back must
// be new work), and the default branch on origin and locally. Bases that do
// not exist are skipped; with none at all there is nothing to compare
// against. It counts the issue's branch, not whatever is checked out, so a
// work tree switched to another branch neither hides nor lends commits.
func hasCommits(ctx context.Context, c *Call) Outcome {
	dir := c.Issue.WorkDir
	if dir == "" {
		return Failf("has_commits: the issue has no work tree to look for commits in; start the issue so it gets one, %s", nextHint)
	}
	if _, err := git(ctx, dir, "rev-parse", "--git-dir"); err != nil {
		return Failf("has_commits: %s is not a git repository (%v); run the issue in its git work tree, %s", dir, err, nextHint)
	}
	def := c.Issue.DefaultBranch
	if def == "" {
		def = "main"
	}
	var refs []string
	if b := c.Issue.Branch; b != "" && b != def {
		refs = append(refs, "refs/remotes/origin/"+b)
	}
	refs = append(refs, "refs/remotes/origin/"+def, "refs/heads/"+def)
	var bases, names []string
	for _, ref := range refs {
		if _, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err == nil {
			bases = append(bases, ref)
			names = append(names, strings.TrimPrefix(strings.TrimPrefix(ref, "refs/remotes/"), "refs/heads/"))
		}
	}
	branch, rev := c.Issue.Branch, "HEAD"
	if branch == "" {
		branch = "HEAD"
	} else if _, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		rev = "refs/heads/" + branch
	} else if head, _ := git(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD"); strings.TrimSpace(head) != branch {
		return Failf("has_commits: branch %s does not exist in %s; create it with `git switch -c %s`, %s", branch, dir, branch, nextHint)
	}
	if len(bases) == 0 {
		return Failf("has_commits: neither origin/%s nor %s exists in %s, so there is nothing to count %s's commits against; fetch the default branch (`git fetch origin %s`), %s",
			def, def, dir, branch, def, nextHint)
	}
	if _, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return Failf("has_commits: %s has no commits at all; commit your work first, %s", dir, nextHint)
	}
	out, err := git(ctx, dir, append([]string{"rev-list", "--count", rev, "--not"}, bases...)...)
	if err != nil {
		return Failf("has_commits: cannot count commits in %s: %v", dir, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return Failf("has_commits: git rev-list printed %q, not a count", out)
	}
	o := Pass()
	if n == 0 {
		o = Failf("no commits on %s beyond %s; commit your work first, %s", branch, strings.Join(names, ", "), nextHint)
	}
	o.Outputs = map[string]string{"commit_count": strconv.Itoa(n)}
	return o
}

// git runs a read-only git command in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], firstLineOf(msg))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.String(), nil
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
