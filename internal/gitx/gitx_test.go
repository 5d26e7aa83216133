package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
)

// TestMain keeps the developer's git configuration (signing, hooks, default
// branch names) out of the tests, and gives the git they run an identity.
func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

func TestBasics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, clone := gittest.NewRemote(t)
	r, err := gitx.Open(ctx, clone)
	require.NoError(t, err)

	b, err := r.CurrentBranch(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main", b)

	head, err := r.HeadSHA(ctx)
	require.NoError(t, err)
	assert.Len(t, head, 40)
	sha, err := r.RevParse(ctx, "origin/main")
	require.NoError(t, err)
	assert.Equal(t, head, sha)

	ok, err := r.RefExists(ctx, "refs/heads/main")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = r.RefExists(ctx, "refs/heads/nope")
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = r.RevParse(ctx, "nope")
	assert.ErrorIs(t, err, gitx.ErrNoRef)
	_, err = r.RevParse(ctx, "--all")
	assert.Error(t, err)

	url, err := r.RemoteURL(ctx, "origin")
	require.NoError(t, err)
	assert.Equal(t, bare, url)
	_, err = r.RemoteURL(ctx, "upstream")
	assert.ErrorIs(t, err, gitx.ErrNoRemote)
	assert.Contains(t, err.Error(), "git remote add upstream")

	isBare, err := r.IsBare(ctx)
	require.NoError(t, err)
	assert.False(t, isBare)
	isBare, err = (&gitx.Repo{Dir: bare}).IsBare(ctx)
	require.NoError(t, err)
	assert.True(t, isBare)

	clean, err := r.IsClean(ctx)
	require.NoError(t, err)
	assert.True(t, clean)

	gittest.Commit(t, clone, "b.txt", "b\n", "b")
	gittest.Commit(t, clone, "c.txt", "c\n", "c")
	n, err := r.CountCommits(ctx, "HEAD", "origin/main")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	anc, err := r.IsAncestor(ctx, "origin/main", "HEAD")
	require.NoError(t, err)
	assert.True(t, anc)
	anc, err = r.IsAncestor(ctx, "HEAD", "origin/main")
	require.NoError(t, err)
	assert.False(t, anc)

	gittest.Run(t, clone, "checkout", "-q", "--detach")
	_, err = r.CurrentBranch(ctx)
	assert.ErrorIs(t, err, gitx.ErrDetached)

	_, err = gitx.Open(ctx, t.TempDir())
	assert.ErrorContains(t, err, "not a git repository")
	assert.ErrorIs(t, err, gitx.ErrNotRepository)
}

func TestErrorNamesCommandAndStderr(t *testing.T) {
	t.Parallel()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	_, err := r.Run(context.Background(), "checkout", "no-such-branch")
	require.Error(t, err)
	var gerr *gitx.Error
	require.ErrorAs(t, err, &gerr)
	assert.NotZero(t, gerr.ExitCode)
	assert.Contains(t, err.Error(), "git checkout no-such-branch")
	assert.Contains(t, err.Error(), clone)
	assert.Contains(t, err.Error(), "no-such-branch")
	assert.Contains(t, err.Error(), "did not match")
}

// conflictingBranches makes main and feature change the same line.
func conflictingBranches(t *testing.T, clone string) {
	t.Helper()
	gittest.Run(t, clone, "checkout", "-q", "-b", "feature")
	gittest.Commit(t, clone, "a.txt", "one\nFEATURE\nthree\n", "feature edit")
	gittest.Commit(t, clone, "f.txt", "f\n", "feature file")
	gittest.Run(t, clone, "checkout", "-q", "main")
	gittest.Commit(t, clone, "a.txt", "one\nMAIN\nthree\n", "main edit")
}

func TestConflictFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	conflictingBranches(t, clone)

	files, err := r.ConflictFiles(ctx, "main", "feature")
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt"}, files)

	_, err = r.MergeTree(ctx, "main", "feature")
	assert.ErrorIs(t, err, forge.ErrConflict)
	var cerr *gitx.ConflictError
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, []string{"a.txt"}, cerr.Files)

	// A clean pair: nil, and a tree.
	gittest.Run(t, clone, "checkout", "-q", "-b", "clean", "main~1")
	gittest.Commit(t, clone, "other file.txt", "x\n", "clean change")
	files, err = r.ConflictFiles(ctx, "main", "clean")
	require.NoError(t, err)
	assert.Nil(t, files)
	tree, err := r.MergeTree(ctx, "main", "clean")
	require.NoError(t, err)
	assert.Len(t, tree, 40)

	_, err = r.ConflictFiles(ctx, "main", "missing")
	assert.Error(t, err)
}

func TestRebase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("clean", func(t *testing.T) {
		t.Parallel()
		_, clone := gittest.NewRemote(t)
		r := &gitx.Repo{Dir: clone}
		gittest.Run(t, clone, "checkout", "-q", "-b", "feature")
		gittest.Commit(t, clone, "f.txt", "f\n", "feature")
		gittest.Run(t, clone, "checkout", "-q", "main")
		mainSHA := gittest.Commit(t, clone, "m.txt", "m\n", "main")
		gittest.Run(t, clone, "checkout", "-q", "feature")

		require.NoError(t, r.Rebase(ctx, "main"))
		anc, err := r.IsAncestor(ctx, mainSHA, "HEAD")
		require.NoError(t, err)
		assert.True(t, anc)
		n, err := r.CountCommits(ctx, "HEAD", "main")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	})

	t.Run("conflict aborts", func(t *testing.T) {
		t.Parallel()
		_, clone := gittest.NewRemote(t)
		r := &gitx.Repo{Dir: clone}
		conflictingBranches(t, clone)
		gittest.Run(t, clone, "checkout", "-q", "feature")
		before := gittest.Run(t, clone, "rev-parse", "HEAD")

		err := r.Rebase(ctx, "main")
		require.Error(t, err)
		assert.ErrorIs(t, err, forge.ErrConflict)
		var cerr *gitx.ConflictError
		require.ErrorAs(t, err, &cerr)
		assert.Equal(t, []string{"a.txt"}, cerr.Files)
		assert.True(t, cerr.Aborted)
		assert.Contains(t, err.Error(), "a.txt")

		assert.Equal(t, before, gittest.Run(t, clone, "rev-parse", "HEAD"))
		assert.Equal(t, "", gittest.Run(t, clone, "status", "--porcelain"))
		b, err := r.CurrentBranch(ctx)
		require.NoError(t, err)
		assert.Equal(t, "feature", b)
		assert.NoDirExists(t, filepath.Join(clone, ".git", "rebase-merge"))
	})

	t.Run("dirty tree refused untouched", func(t *testing.T) {
		t.Parallel()
		_, clone := gittest.NewRemote(t)
		r := &gitx.Repo{Dir: clone}
		conflictingBranches(t, clone)
		gittest.Run(t, clone, "checkout", "-q", "feature")
		require.NoError(t, os.WriteFile(filepath.Join(clone, "a.txt"), []byte("dirty\n"), 0o644))
		err := r.Rebase(ctx, "main")
		require.Error(t, err)
		assert.NotErrorIs(t, err, forge.ErrConflict)
		got, _ := os.ReadFile(filepath.Join(clone, "a.txt"))
		assert.Equal(t, "dirty\n", string(got))
	})
}

func TestPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	o := &gitx.Repo{Dir: bare}

	gittest.Run(t, clone, "checkout", "-q", "-b", "feature")
	first := gittest.Commit(t, clone, "f.txt", "1\n", "one")
	require.NoError(t, r.Push(ctx, "origin", "feature", ""))
	got, err := o.RevParse(ctx, "refs/heads/feature")
	require.NoError(t, err)
	assert.Equal(t, first, got)

	// Someone else pushes to feature from another clone.
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, filepath.Dir(other), "clone", "-q", "-b", "feature", bare, other)
	theirs := gittest.Commit(t, other, "g.txt", "theirs\n", "theirs")
	gittest.Run(t, other, "push", "-q", "origin", "feature")

	// Our rewritten history, pushed with the lease we last saw: rejected.
	gittest.Run(t, clone, "commit", "-q", "--amend", "-m", "one, amended")
	err = r.Push(ctx, "origin", "feature", first)
	assert.ErrorIs(t, err, gitx.ErrLeaseRejected)
	got, _ = o.RevParse(ctx, "refs/heads/feature")
	assert.Equal(t, theirs, got, "a rejected lease leaves the remote alone")

	// A plain push of diverged history is rejected differently, with the
	// way out.
	err = r.Push(ctx, "origin", "feature", "")
	assert.ErrorIs(t, err, gitx.ErrPushRejected)
	assert.NotErrorIs(t, err, gitx.ErrLeaseRejected)
	assert.Contains(t, err.Error(), "the remote has commits you do not have; pull them first (`git pull --rebase origin feature`)")

	// With the current lease the rewrite goes through.
	require.NoError(t, r.Push(ctx, "origin", "feature", theirs))
	mine, _ := r.HeadSHA(ctx)
	got, _ = o.RevParse(ctx, "refs/heads/feature")
	assert.Equal(t, mine, got)

	// A branch that was never made here.
	err = r.Push(ctx, "origin", "nope", "")
	assert.ErrorIs(t, err, gitx.ErrNoRef)
	assert.NotErrorIs(t, err, gitx.ErrPushRejected)
	assert.Contains(t, err.Error(), "branch nope does not exist here; create it with `git switch -c nope`")
	var gerr *gitx.Error
	assert.ErrorAs(t, err, &gerr, "git's own words are kept")

	// The remote refuses for its own reasons: git's reason, no pull hint.
	hook := filepath.Join(bare, "hooks", "pre-receive")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n"), 0o755))
	gittest.Commit(t, clone, "h.txt", "h\n", "more")
	err = r.Push(ctx, "origin", "feature", "")
	assert.ErrorIs(t, err, gitx.ErrPushRejected)
	assert.NotErrorIs(t, err, gitx.ErrLeaseRejected)
	assert.Contains(t, err.Error(), "hook declined")
	assert.NotContains(t, err.Error(), "git pull")
	require.NoError(t, os.Remove(hook))

	// Fetch brings the remote's branches.
	require.NoError(t, (&gitx.Repo{Dir: other}).Fetch(ctx, "origin"))
	got, _ = (&gitx.Repo{Dir: other}).RevParse(ctx, "origin/feature")
	assert.Equal(t, mine, got)
}

func TestRefsAndCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, clone := gittest.NewRemote(t)
	o := &gitx.Repo{Dir: bare}
	main, err := o.RevParse(ctx, "main")
	require.NoError(t, err)
	tree, err := o.TreeOf(ctx, main)
	require.NoError(t, err)

	c, err := o.CommitTree(ctx, tree, []string{main}, "empty change\n\nbody")
	require.NoError(t, err)
	require.NoError(t, o.UpdateRef(ctx, "refs/heads/main", c, main))
	err = o.UpdateRef(ctx, "refs/heads/main", main, main)
	assert.ErrorIs(t, err, gitx.ErrRefMoved, "a stale old value is a failed compare-and-swap")
	got, _ := o.RevParse(ctx, "main")
	assert.Equal(t, c, got)

	require.NoError(t, o.UpdateRef(ctx, "refs/heads/x", c, ""))
	assert.ErrorIs(t, o.DeleteRef(ctx, "refs/heads/x", main), gitx.ErrRefMoved)
	require.NoError(t, o.DeleteRef(ctx, "refs/heads/x", c))
	ok, _ := o.RefExists(ctx, "refs/heads/x")
	assert.False(t, ok)

	wt := filepath.Join(t.TempDir(), "wt")
	require.NoError(t, o.WorktreeAdd(ctx, wt, c))
	assert.FileExists(t, filepath.Join(wt, "a.txt"))
	head, err := (&gitx.Repo{Dir: wt}).HeadSHA(ctx)
	require.NoError(t, err)
	assert.Equal(t, c, head)
	require.NoError(t, o.WorktreeRemove(ctx, wt))
	assert.NoDirExists(t, wt)
	require.NoError(t, o.WorktreeRemove(ctx, wt), "removing a removed work tree is fine")
	_ = clone
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone, Timeout: 200 * time.Millisecond}
	// The alias runs a shell whose child outlives git unless git's whole
	// process group is killed.
	pidFile := filepath.Join(t.TempDir(), "pid")
	_, err := r.Run(context.Background(), "-c", "alias.slow=!sleep 60 & echo $! > '"+pidFile+"'; wait", "slow")
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "timed out after 200ms")
	assert.Contains(t, err.Error(), "git -c alias.slow=!sleep 60 &")
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !proc.Alive(pid) }, 10*time.Second, 10*time.Millisecond,
		"the alias's child was killed with git")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = (&gitx.Repo{Dir: clone}).Run(ctx, "status")
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

func TestEnvDoesNotRedirect(t *testing.T) {
	// A GIT_DIR inherited from a git hook must not point commands elsewhere.
	bare, clone := gittest.NewRemote(t)
	t.Setenv("GIT_DIR", bare)
	b, err := (&gitx.Repo{Dir: clone}).IsBare(context.Background())
	require.NoError(t, err)
	assert.False(t, b)
}
