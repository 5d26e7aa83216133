package cirun_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/local/cirun"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

func TestNewAndRemoveWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, _ := gittest.NewRemote(t)
	repo := &gitx.Repo{Dir: bare}
	wt, err := cirun.NewWorktree()
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(wt)) })
	require.NoError(t, repo.WorktreeAdd(ctx, wt, "main"))
	require.FileExists(t, filepath.Join(wt, "a.txt"))

	cirun.RemoveWorktree(ctx, repo, wt)
	assert.NoDirExists(t, filepath.Dir(wt), "the temporary directory goes too")
	list, err := repo.Worktrees(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 1, "git forgot the work tree: %v", list)
}

// Whatever a hand-edited record or command line names, RemoveWorktree
// removes only what NewWorktree makes.
func TestRemoveWorktreeLeavesOtherPaths(t *testing.T) {
	t.Parallel()
	bare, clone := gittest.NewRemote(t)
	other, err := os.MkdirTemp(t.TempDir(), "elsewhere-")
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(other, "src"), 0o755))
	for _, path := range []string{"", clone, bare, filepath.Join(other, "src")} {
		cirun.RemoveWorktree(context.Background(), &gitx.Repo{Dir: bare}, path)
	}
	assert.FileExists(t, filepath.Join(clone, "a.txt"))
	assert.DirExists(t, bare)
	assert.DirExists(t, filepath.Join(other, "src"))
}
