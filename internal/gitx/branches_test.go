package gitx_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

func TestWorktreeAddBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := (&gitx.Repo{Dir: clone}).With(gittest.Env()...)
	main := gittest.Run(t, clone, "rev-parse", "main")

	// A new branch is made at start, and said to be.
	first := filepath.Join(t.TempDir(), "first")
	created, err := r.WorktreeAddBranch(ctx, first, "issue-001-x", "main")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "issue-001-x", gittest.Run(t, first, "symbolic-ref", "--short", "HEAD"))
	assert.Equal(t, main, gittest.Run(t, first, "rev-parse", "HEAD"))
	commit := gittest.Commit(t, first, "b.txt", "b\n", "work")
	require.NoError(t, r.WorktreeRemove(ctx, first))

	// An existing branch is checked out as it is; start is not used.
	again := filepath.Join(t.TempDir(), "again")
	created, err = r.WorktreeAddBranch(ctx, again, "issue-001-x", "main")
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, commit, gittest.Run(t, again, "rev-parse", "HEAD"))

	for _, bad := range []string{"-x", "a..b", "with space"} {
		_, err := r.WorktreeAddBranch(ctx, filepath.Join(t.TempDir(), "bad"), bad, "main")
		assert.ErrorContains(t, err, "bad git branch name", bad)
	}
}
