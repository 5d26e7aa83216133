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

func TestUnpushed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	gittest.Run(t, clone, "switch", "-q", "-c", "pushed")
	gittest.Commit(t, clone, "p.txt", "p\n", "pushed work")
	gittest.Run(t, clone, "push", "-q", "origin", "pushed")
	gittest.Run(t, clone, "switch", "-q", "-c", "local", "main")
	gittest.Commit(t, clone, "l1.txt", "1\n", "local 1")
	gittest.Commit(t, clone, "l2.txt", "2\n", "local 2")
	gittest.Run(t, clone, "switch", "-q", "-c", "merged", "main")
	gittest.Commit(t, clone, "m.txt", "m\n", "merged here")
	gittest.Run(t, clone, "switch", "-q", "main")
	gittest.Run(t, clone, "merge", "-q", "--ff-only", "merged")

	for _, tt := range []struct {
		rev  string
		also []string
		want int
	}{
		{"pushed", nil, 0},
		{"local", nil, 2},
		{"merged", nil, 1},
		{"merged", []string{"refs/heads/main"}, 0},
		{"local", []string{"refs/heads/main"}, 2},
	} {
		n, err := r.Unpushed(ctx, tt.rev, tt.also...)
		require.NoError(t, err, tt.rev)
		assert.Equal(t, tt.want, n, "%s --not --remotes %v", tt.rev, tt.also)
	}
	_, err := r.Unpushed(ctx, "--all")
	assert.Error(t, err, "a revision that reads as an option is refused")
	_, err = r.Unpushed(ctx, "no-such-branch")
	assert.Error(t, err)
}

func TestChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	gittest.Commit(t, clone, ".gitignore", "build/\n", "ignore build")
	gittest.Commit(t, clone, "old name.txt", "x\n", "a file to rename")

	changes, err := r.Changes(ctx)
	require.NoError(t, err)
	assert.Empty(t, changes, "a fresh clone is clean")

	require.NoError(t, os.MkdirAll(filepath.Join(clone, "build"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(clone, "build", "out"), nil, 0o644))
	changes, err = r.Changes(ctx)
	require.NoError(t, err)
	assert.Empty(t, changes, "ignored files are no work")

	require.NoError(t, os.WriteFile(filepath.Join(clone, "a.txt"), []byte("changed\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(clone, "new"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(clone, "new", "b.txt"), nil, 0o644))
	gittest.Run(t, clone, "mv", "old name.txt", "new name.txt")
	changes, err = r.Changes(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a.txt", "new/b.txt", "new name.txt"}, changes)
}

func TestWorktreeRemoveIfClean(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	wt := filepath.Join(filepath.Dir(clone), "wt")
	gittest.Run(t, clone, "worktree", "add", "-q", "-b", "issue-1", wt)

	require.NoError(t, os.WriteFile(filepath.Join(wt, "wip.txt"), []byte("wip\n"), 0o644))
	require.Error(t, r.WorktreeRemoveIfClean(ctx, wt), "git refuses a work tree with untracked files")
	assert.FileExists(t, filepath.Join(wt, "wip.txt"))

	require.NoError(t, os.Remove(filepath.Join(wt, "wip.txt")))
	require.NoError(t, r.WorktreeRemoveIfClean(ctx, wt))
	assert.NoDirExists(t, wt)
	_, ok, err := r.WorktreeFor(ctx, "issue-1")
	require.NoError(t, err)
	assert.False(t, ok)
}
