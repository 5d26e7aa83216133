package gitx_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

func TestWorktrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	head, err := r.HeadSHA(ctx)
	require.NoError(t, err)
	root := filepath.Dir(clone)
	feature := filepath.Join(root, "feature tree")
	detached := filepath.Join(root, "detached")
	unborn := filepath.Join(root, "unborn")
	gittest.Run(t, clone, "worktree", "add", "-q", "-b", "issue-7", feature)
	gittest.Run(t, clone, "worktree", "add", "-q", "--detach", detached)
	gittest.Run(t, clone, "worktree", "add", "-q", "--detach", unborn)
	gittest.Run(t, unborn, "checkout", "-q", "--orphan", "fresh")
	gittest.Run(t, clone, "worktree", "lock", detached)

	list, err := r.Worktrees(ctx)
	require.NoError(t, err)
	require.Len(t, list, 4)
	assert.Equal(t, gitx.Worktree{Path: realPath(t, clone), Head: head, Branch: "main"}, list[0], "the main work tree comes first")
	assert.ElementsMatch(t, []gitx.Worktree{
		{Path: realPath(t, feature), Head: head, Branch: "issue-7"},
		{Path: realPath(t, detached), Head: head, Detached: true, Locked: true},
		{Path: realPath(t, unborn), Branch: "fresh"}, // no commits, no head
	}, list[1:])

	tests := []struct {
		branch string
		want   string
	}{
		{"main", clone},
		{"issue-7", feature},
		{"fresh", unborn},
		{"issue-8", ""},
	}
	for _, tt := range tests {
		// Any work tree of the repository answers for all of them.
		wt, ok, err := (&gitx.Repo{Dir: feature}).WorktreeFor(ctx, tt.branch)
		require.NoError(t, err, tt.branch)
		assert.Equal(t, tt.want != "", ok, tt.branch)
		if ok {
			assert.Equal(t, realPath(t, tt.want), wt.Path, tt.branch)
		}
	}

	bareList, err := (&gitx.Repo{Dir: bare}).Worktrees(ctx)
	require.NoError(t, err)
	require.Len(t, bareList, 1)
	assert.True(t, bareList[0].Bare)
	assert.Empty(t, bareList[0].Branch)
	_, ok, err := (&gitx.Repo{Dir: bare}).WorktreeFor(ctx, "main")
	require.NoError(t, err)
	assert.False(t, ok, "a bare repository checks nothing out")

	_, err = (&gitx.Repo{Dir: t.TempDir()}).Worktrees(ctx)
	assert.ErrorIs(t, err, gitx.ErrNotRepository)
}

func TestWorktreePrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	gone := filepath.Join(t.TempDir(), "gone")
	gittest.Run(t, clone, "worktree", "add", "-q", "--detach", gone)
	gittest.Run(t, clone, "worktree", "remove", "--force", gone)
	gittest.Run(t, clone, "worktree", "add", "-q", "--detach", gone)
	require.NoError(t, os.RemoveAll(gone))

	list, err := r.Worktrees(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.True(t, list[1].Prunable, "its directory is gone")

	require.NoError(t, r.WorktreePrune(ctx))
	list, err = r.Worktrees(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 1)
}

// realPath is path as git reports it: absolute, links resolved.
func realPath(t *testing.T, path string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	return real
}

// The host rebases a PR's head away from every work tree: the agent's
// checkout and its branch stay as they were; the result is pushed with a
// lease, and a conflict names its files and leaves nothing behind.
func TestRebaseCommitTouchesNoWorkTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	agent := filepath.Join(filepath.Dir(clone), "agent")
	gittest.Run(t, clone, "worktree", "add", "-q", "-b", "issue-7", agent)
	head := gittest.Commit(t, agent, "feature.txt", "feature\n", "feature")
	gittest.Run(t, agent, "push", "-q", "origin", "issue-7")
	gittest.Commit(t, clone, "main.txt", "main\n", "main moves on")
	gittest.Run(t, clone, "push", "-q", "origin", "main")
	require.NoError(t, os.WriteFile(filepath.Join(agent, "wip.txt"), []byte("uncommitted\n"), 0o644))

	rebased, err := r.RebaseCommit(ctx, head, "origin/main")
	require.NoError(t, err)
	assert.NotEqual(t, head, rebased)
	require.NoError(t, r.PushCommit(ctx, "origin", rebased, "issue-7", head))
	assert.Equal(t, rebased, gittest.Run(t, bare, "rev-parse", "issue-7"))
	assert.Equal(t, head, gittest.Run(t, agent, "rev-parse", "HEAD"), "the agent's checkout is untouched")
	assert.FileExists(t, filepath.Join(agent, "wip.txt"))
	list, err := r.Worktrees(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 2, "the temporary work tree is gone")

	err = r.PushCommit(ctx, "origin", head, "issue-7", head)
	require.ErrorIs(t, err, gitx.ErrLeaseRejected, "a lease on a head the remote left is refused")

	gittest.Commit(t, clone, "feature.txt", "main's own\n", "conflicting")
	_, err = r.RebaseCommit(ctx, head, "main")
	var ce *gitx.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, []string{"feature.txt"}, ce.Files)
	list, err = r.Worktrees(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 2)
}

// CountNew sees a branch whose commits were rebased elsewhere as adding
// nothing, and a commit made since as one.
func TestCountNewSeesRebasedCommitsAsThere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	gittest.Run(t, clone, "checkout", "-q", "-b", "issue-7")
	head := gittest.Commit(t, clone, "feature.txt", "feature\n", "feature")
	gittest.Run(t, clone, "checkout", "-q", "main")
	gittest.Commit(t, clone, "main.txt", "main\n", "main moves on")
	rebased, err := r.RebaseCommit(ctx, head, "main")
	require.NoError(t, err)

	n, err := r.CountNew(ctx, rebased, "issue-7")
	require.NoError(t, err)
	assert.Zero(t, n, "the rebased head holds the branch's change")
	gittest.Run(t, clone, "checkout", "-q", "issue-7")
	gittest.Commit(t, clone, "more.txt", "more\n", "more")
	n, err = r.CountNew(ctx, rebased, "issue-7")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}
