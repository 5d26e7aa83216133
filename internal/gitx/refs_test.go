package gitx_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

func TestCurrentBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	tests := []struct {
		name     string
		checkout []string
		want     string
		wantErr  error
	}{
		{"a branch", []string{"checkout", "-q", "-b", "issue-3"}, "issue-3", nil},
		{"a branch with no commits yet", []string{"checkout", "-q", "--orphan", "issue-4"}, "issue-4", nil},
		{"detached", []string{"checkout", "-q", "--detach", "main"}, "", gitx.ErrDetached},
	}
	for _, tt := range tests {
		gittest.Run(t, clone, tt.checkout...)
		got, err := r.CurrentBranch(ctx)
		if tt.wantErr != nil {
			assert.ErrorIs(t, err, tt.wantErr, tt.name)
			assert.ErrorContains(t, err, "git switch", tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
	}
	_, err := (&gitx.Repo{Dir: t.TempDir()}).CurrentBranch(ctx)
	assert.ErrorIs(t, err, gitx.ErrNotRepository)
	assert.NotErrorIs(t, err, gitx.ErrDetached)
}

func TestCountCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	gittest.Run(t, clone, "checkout", "-q", "-b", "issue-5")
	gittest.Commit(t, clone, "b.txt", "b\n", "b")
	pushed := gittest.Commit(t, clone, "c.txt", "c\n", "c")
	gittest.Run(t, clone, "push", "-q", "origin", "issue-5")
	gittest.Commit(t, clone, "d.txt", "d\n", "d")

	tests := []struct {
		name  string
		rev   string
		bases []string
		want  int
	}{
		{"no bases: all history", "HEAD", nil, 4},
		{"beyond the default branch", "HEAD", []string{"origin/main"}, 3},
		{"beyond what was pushed too", "issue-5", []string{"origin/main", "origin/issue-5"}, 1},
		{"a base ahead of rev", pushed, []string{"HEAD"}, 0},
	}
	for _, tt := range tests {
		n, err := r.CountCommits(ctx, tt.rev, tt.bases...)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, n, tt.name)
	}

	_, err := r.CountCommits(ctx, "HEAD", "origin/nope")
	assert.Error(t, err)
	_, err = r.CountCommits(ctx, "HEAD", "--all")
	assert.ErrorContains(t, err, "bad git revision", "an option is not a base")
}

func TestRevParseWantsACommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	head, err := r.RevParse(ctx, "HEAD")
	require.NoError(t, err)
	gittest.Run(t, clone, "tag", "-a", "-m", "v1", "v1")
	got, err := r.RevParse(ctx, "v1")
	require.NoError(t, err)
	assert.Equal(t, head, got, "an annotated tag is peeled to its commit")

	tree, err := r.TreeOf(ctx, "HEAD")
	require.NoError(t, err)
	for _, rev := range []string{tree, "HEAD:a.txt", "refs/heads/nope"} {
		_, err := r.RevParse(ctx, rev)
		assert.ErrorIs(t, err, gitx.ErrNoRef, rev)
	}
}
