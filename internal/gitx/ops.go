package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrConflict is what every ConflictError wraps. forge.ErrConflict is this
// same value, so errors.Is(err, forge.ErrConflict) holds for a conflict git
// reports without gitx, a leaf, importing the forge above it.
var ErrConflict = errors.New("merge conflict")

// ConflictError is a merge or rebase that stopped on conflicting files.
// errors.Is(err, ErrConflict) holds for it.
type ConflictError struct {
	// Op says what conflicted: "rebase onto origin/main", "merge feature into main".
	Op    string
	Files []string
	// Aborted says a rebase was aborted and the work tree left as it was.
	Aborted bool
}

func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("%s: merge conflict in %s", e.Op, strings.Join(e.Files, ", "))
	if len(e.Files) == 0 {
		msg = e.Op + ": merge conflict"
	}
	if e.Aborted {
		msg += " (rebase aborted; the work tree is as it was)"
	}
	return msg
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// ConflictingFiles lets callers get the files through a one-method
// interface, without importing gitx.
func (e *ConflictError) ConflictingFiles() []string { return e.Files }

// checkRev refuses revisions git would read as options.
func checkRev(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return fmt.Errorf("bad git revision %q", rev)
	}
	return nil
}

// RevParse returns the commit rev names (tags peeled), or an error wrapping
// ErrNoRef.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		if exitCode(err) == 1 {
			return "", fmt.Errorf("no commit %q in %s: %w", rev, r.Dir, ErrNoRef)
		}
		return "", err
	}
	return out, nil
}

// HeadSHA is the commit HEAD points at.
func (r *Repo) HeadSHA(ctx context.Context) (string, error) { return r.RevParse(ctx, "HEAD") }

// TreeOf returns the tree of commit rev.
func (r *Repo) TreeOf(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", rev+"^{tree}")
	if err != nil && exitCode(err) == 1 {
		return "", fmt.Errorf("no tree for %q in %s: %w", rev, r.Dir, ErrNoRef)
	}
	return out, err
}

// RefExists reports whether ref (refs/heads/x, origin/main, a sha) names a
// commit.
func (r *Repo) RefExists(ctx context.Context, ref string) (bool, error) {
	_, err := r.RevParse(ctx, ref)
	if errors.Is(err, ErrNoRef) {
		return false, nil
	}
	return err == nil, err
}

// CurrentBranch is the branch HEAD is on, or an error wrapping ErrDetached.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return "", fmt.Errorf("%s: %w; check out a branch (`git switch <branch>`)", r.Dir, ErrDetached)
		}
		return "", err
	}
	return out, nil
}

// IsBare reports whether the repository has no work tree.
func (r *Repo) IsBare(ctx context.Context) (bool, error) {
	out, err := r.Run(ctx, "rev-parse", "--is-bare-repository")
	return out == "true", err
}

// IsClean reports whether the work tree and index match HEAD (untracked
// files count as changes).
func (r *Repo) IsClean(ctx context.Context) (bool, error) {
	out, err := r.Run(ctx, "status", "--porcelain")
	return out == "", err
}

// RemoteURL is the fetch URL of remote name.
func (r *Repo) RemoteURL(ctx context.Context, name string) (string, error) {
	out, err := r.Run(ctx, "remote", "get-url", name)
	if err != nil {
		// get-url exits 2 for a missing remote.
		if exitCode(err) == 2 || strings.Contains(err.Error(), "No such remote") {
			return "", fmt.Errorf("%s has no remote %q (%w); add it with `git remote add %s <url>`", r.Dir, name, ErrNoRemote, name)
		}
		return "", err
	}
	return out, nil
}

// Fetch fetches refspecs (all of the remote's configured ones if none) from
// remote.
func (r *Repo) Fetch(ctx context.Context, remote string, refspecs ...string) error {
	_, err := r.Run(ctx, append([]string{"fetch", "--quiet", remote}, refspecs...)...)
	return err
}

// Push pushes local branch to the same name on remote. With lease (the
// sha the remote branch is expected at) the push may rewrite the branch,
// but only from that sha: a remote that moved fails with ErrLeaseRejected.
// Without lease it is a plain fast-forward push; a refused one fails with
// ErrPushRejected. A branch that does not exist here fails with ErrNoRef.
// Each error says what to do about it.
func (r *Repo) Push(ctx context.Context, remote, branch, lease string) error {
	// --set-upstream so a plain `git push` from the work tree goes to the
	// same place afterwards.
	return r.push(ctx, remote, "refs/heads/"+branch, branch, lease, "--set-upstream")
}

// PushCommit sets branch on remote to commit sha (one made without a
// branch here, such as RebaseCommit's), with Push's lease and errors.
func (r *Repo) PushCommit(ctx context.Context, remote, sha, branch, lease string) error {
	if err := checkRev(sha); err != nil {
		return err
	}
	return r.push(ctx, remote, sha, branch, lease)
}

func (r *Repo) push(ctx context.Context, remote, src, branch, lease string, flags ...string) error {
	ref := "refs/heads/" + branch
	args := append([]string{"push", "--porcelain"}, flags...)
	if lease != "" {
		args = append(args, "--force-with-lease="+ref+":"+lease)
	}
	args = append(args, remote, src+":"+ref)
	out, err := r.run(ctx, args...)
	if err == nil {
		return nil
	}
	var gerr *Error
	if errors.As(err, &gerr) && strings.Contains(gerr.Stderr, "src refspec") && strings.Contains(gerr.Stderr, "does not match any") {
		return fmt.Errorf("push %s to %s: branch %s does not exist here; create it with `git switch -c %s`: %w: %w",
			branch, remote, branch, branch, ErrNoRef, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "!") {
			continue
		}
		switch {
		case strings.Contains(line, "stale info"):
			return fmt.Errorf("push %s to %s (expected at %s): %w: %v", branch, remote, ShortSHA(lease), ErrLeaseRejected, err)
		case strings.Contains(line, "non-fast-forward") || strings.Contains(line, "fetch first"):
			return fmt.Errorf("push %s to %s: %w: the remote has commits you do not have; pull them first (`git pull --rebase %s %s`): %v",
				branch, remote, ErrPushRejected, remote, branch, err)
		}
		return fmt.Errorf("push %s to %s: %w: %s: %v", branch, remote, ErrPushRejected, pushReason(line), err)
	}
	return err
}

// pushReason is the reason in a porcelain rejection line
// ("!\tsrc:dst\t[remote rejected] (hook declined)").
func pushReason(line string) string {
	fields := strings.Split(line, "\t")
	return strings.TrimSpace(fields[len(fields)-1])
}

// ShortSHA abbreviates a commit id for messages, as people read them.
func ShortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Rebase rebases the current branch onto onto. When it stops on conflicts
// it runs `git rebase --abort`, so HEAD and the work tree are as before,
// and returns a *ConflictError listing the conflicting files.
func (r *Repo) Rebase(ctx context.Context, onto string) error {
	if err := checkRev(onto); err != nil {
		return err
	}
	_, err := r.Run(ctx, "rebase", onto)
	if err == nil {
		return nil
	}
	// Clean up even when ctx is what stopped the rebase.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout())
	defer cancel()
	inProgress, perr := r.rebaseInProgress(cleanup)
	if perr != nil || !inProgress {
		// Refused before starting (dirty work tree, unknown onto).
		return err
	}
	files, ferr := r.unmerged(cleanup)
	if _, aerr := r.Run(cleanup, "rebase", "--abort"); aerr != nil {
		return fmt.Errorf("%w; and then `git rebase --abort` failed too, so %s is mid-rebase: resolve it by hand: %v", err, r.Dir, aerr)
	}
	if ferr == nil && len(files) > 0 {
		return &ConflictError{Op: "rebase onto " + onto, Files: files, Aborted: true}
	}
	return fmt.Errorf("%w (rebase aborted; the work tree is as it was)", err)
}

func (r *Repo) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

func (r *Repo) rebaseInProgress(ctx context.Context) (bool, error) {
	for _, name := range []string{"rebase-merge", "rebase-apply"} {
		p, err := r.Run(ctx, "rev-parse", "--git-path", name)
		if err != nil {
			return false, err
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.Dir, p)
		}
		if _, err := os.Stat(p); err == nil {
			return true, nil
		}
	}
	return false, nil
}

// unmerged lists the paths with unresolved conflicts in the index.
func (r *Repo) unmerged(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return nil, err
	}
	return splitZ(out), nil
}

func splitZ(s string) []string {
	var out []string
	for _, f := range strings.Split(s, "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// MergeTree merges head into base without touching any work tree or ref
// (git merge-tree --write-tree) and returns the merged tree, or a
// *ConflictError listing the conflicting files.
func (r *Repo) MergeTree(ctx context.Context, base, head string) (tree string, err error) {
	if err := checkRev(base); err != nil {
		return "", err
	}
	if err := checkRev(head); err != nil {
		return "", err
	}
	out, err := r.run(ctx, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", base, head)
	fields := splitZ(out)
	switch {
	case err == nil && len(fields) > 0:
		return fields[0], nil
	case exitCode(err) == 1 && len(fields) > 0:
		return "", &ConflictError{Op: "merge " + head + " into " + base, Files: fields[1:]}
	case err == nil:
		return "", fmt.Errorf("git merge-tree %s %s printed no tree", base, head)
	}
	return "", err
}

// ConflictFiles lists the files that would conflict merging head into
// base; nil when they merge cleanly.
func (r *Repo) ConflictFiles(ctx context.Context, base, head string) ([]string, error) {
	_, err := r.MergeTree(ctx, base, head)
	var cerr *ConflictError
	if errors.As(err, &cerr) {
		if cerr.Files == nil {
			return []string{}, nil
		}
		return cerr.Files, nil
	}
	return nil, err
}

// CountCommits counts the commits reachable from rev and from none of
// bases (git rev-list --count rev --not bases...).
func (r *Repo) CountCommits(ctx context.Context, rev string, bases ...string) (int, error) {
	return r.count(ctx, append([]string{rev}, bases...), append(append([]string{rev, "--not"}, bases...), "--")...)
}

// CountNew counts the commits of rev that base lacks, not even as the
// same change under another id (a commit rebased onto base's history
// counts as there): rev-list --cherry-pick --right-only base...rev.
func (r *Repo) CountNew(ctx context.Context, base, rev string) (int, error) {
	return r.count(ctx, []string{base, rev}, "--cherry-pick", "--right-only", base+"..."+rev, "--")
}

// count runs git rev-list --count with args, once revs are checked.
func (r *Repo) count(ctx context.Context, revs []string, args ...string) (int, error) {
	for _, rev := range revs {
		if err := checkRev(rev); err != nil {
			return 0, err
		}
	}
	out, err := r.Run(ctx, append([]string{"rev-list", "--count"}, args...)...)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("git rev-list --count printed %q, not a count", out)
	}
	return n, nil
}

// IsAncestor reports whether ancestor is reachable from rev.
func (r *Repo) IsAncestor(ctx context.Context, ancestor, rev string) (bool, error) {
	if err := checkRev(ancestor); err != nil {
		return false, err
	}
	if err := checkRev(rev); err != nil {
		return false, err
	}
	_, err := r.Run(ctx, "merge-base", "--is-ancestor", ancestor, rev)
	if exitCode(err) == 1 {
		return false, nil
	}
	return err == nil, err
}

// MergeBase is the best common ancestor of commits a and b.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	if err := checkRev(a); err != nil {
		return "", err
	}
	if err := checkRev(b); err != nil {
		return "", err
	}
	out, err := r.Run(ctx, "merge-base", a, b)
	return strings.TrimSpace(out), err
}

// UpdateRef points ref at newSHA. With oldSHA it is a compare-and-swap:
// if ref is not at oldSHA it fails with ErrRefMoved and changes nothing.
func (r *Repo) UpdateRef(ctx context.Context, ref, newSHA, oldSHA string) error {
	args := []string{"update-ref", ref, newSHA}
	if oldSHA != "" {
		args = append(args, oldSHA)
	}
	return r.casRef(ctx, ref, oldSHA, args)
}

// CreateRef makes ref point at sha, only if ref does not exist yet
// (ErrRefMoved otherwise).
func (r *Repo) CreateRef(ctx context.Context, ref, sha string) error {
	const none = "0000000000000000000000000000000000000000"
	return r.casRef(ctx, ref, none, []string{"update-ref", ref, sha, none})
}

// DeleteRef deletes ref, only if it is at oldSHA when oldSHA is given
// (ErrRefMoved otherwise).
func (r *Repo) DeleteRef(ctx context.Context, ref, oldSHA string) error {
	args := []string{"update-ref", "-d", ref}
	if oldSHA != "" {
		args = append(args, oldSHA)
	}
	return r.casRef(ctx, ref, oldSHA, args)
}

func (r *Repo) casRef(ctx context.Context, ref, oldSHA string, args []string) error {
	_, err := r.Run(ctx, args...)
	if err == nil || oldSHA == "" {
		return err
	}
	now, rerr := r.Run(ctx, "rev-parse", "--verify", "--quiet", ref)
	if rerr == nil && now != oldSHA || exitCode(rerr) == 1 {
		if now == "" {
			now = "nothing"
		}
		return fmt.Errorf("%s is at %s, not %s: %w", ref, ShortSHA(now), ShortSHA(oldSHA), ErrRefMoved)
	}
	return err
}

// CommitTree makes a commit of tree with parents and message, without
// touching any ref; identity comes from the environment (Repo.Env).
func (r *Repo) CommitTree(ctx context.Context, tree string, parents []string, message string) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	args = append(args, "-m", message)
	return r.Run(ctx, args...)
}
