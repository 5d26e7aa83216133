package local_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeability(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	e.branch(t, "clean", map[string]string{"c.txt": "c\n"})
	e.branch(t, "clash", map[string]string{"a.txt": "one\nBRANCH\nthree\n", "z.txt": "z\n"})
	e.pushMain(t, "a.txt", "one\nMAIN\nthree\n")

	clean, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "clean"})
	require.NoError(t, err)
	clash, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "clash"})
	require.NoError(t, err)
	assert.Equal(t, forge.Mergeable, clean.Mergeable)
	assert.Equal(t, forge.Conflicting, clash.Mergeable)

	files, err := f.ConflictFiles(ctx, clean.Number)
	require.NoError(t, err)
	assert.Nil(t, files)
	files, err = f.ConflictFiles(ctx, clash.Number)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt"}, files)

	before := gittest.Run(t, e.bare, "rev-parse", "main")
	err = f.Merge(ctx, clash.Number, forge.MergeSquash, false, "")
	require.ErrorIs(t, err, forge.ErrConflict)
	assert.Contains(t, err.Error(), "a.txt")
	assert.Equal(t, before, gittest.Run(t, e.bare, "rev-parse", "main"))
	pr, err := f.PR(ctx, clash.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateOpen, pr.State)
}

func TestMerge(t *testing.T) {
	t.Parallel()
	for _, method := range []forge.MergeMethod{forge.MergeSquash, forge.MergeMerge, forge.MergeRebase} {
		t.Run(string(method), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, f := newForge(t, local.Options{})
			gittest.Run(t, e.work, "checkout", "-q", "-b", "feature")
			gittest.Commit(t, e.work, "f1.txt", "1\n", "first")
			head := gittest.Commit(t, e.work, "f2.txt", "2\n", "second")
			gittest.Run(t, e.work, "push", "-q", "origin", "feature")
			oldMain := e.pushMain(t, "m.txt", "m\n")
			pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature", Title: "Feature work"})
			require.NoError(t, err)

			require.NoError(t, f.Merge(ctx, pr.Number, method, true, ""))

			newMain := gittest.Run(t, e.bare, "rev-parse", "main")
			assert.NotEqual(t, oldMain, newMain)
			parents := strings.Fields(gittest.Run(t, e.bare, "log", "-1", "--format=%P", "main"))
			subject := gittest.Run(t, e.bare, "log", "-1", "--format=%s", "main")
			switch method {
			case forge.MergeSquash:
				assert.Equal(t, []string{oldMain}, parents)
				assert.Equal(t, "Feature work (#1)", subject)
				assert.Equal(t, gittest.Name, gittest.Run(t, e.bare, "log", "-1", "--format=%an", "main"))
				assert.Equal(t, "agenttree", gittest.Run(t, e.bare, "log", "-1", "--format=%cn", "main"))
			case forge.MergeMerge:
				assert.Equal(t, []string{oldMain, head}, parents)
				assert.Equal(t, "Merge pull request #1 from feature", subject)
			case forge.MergeRebase:
				assert.Len(t, parents, 1)
				assert.Equal(t, "second", subject)
				assert.Equal(t, "first", gittest.Run(t, e.bare, "log", "-1", "--format=%s", "main~1"))
				assert.Equal(t, oldMain, gittest.Run(t, e.bare, "rev-parse", "main~2"))
			}

			// The working clone can fetch the result.
			gittest.Run(t, e.work, "fetch", "-q", "origin")
			gittest.Run(t, e.work, "checkout", "-q", "-B", "main", "origin/main")
			for _, file := range []string{"a.txt", "m.txt", "f1.txt", "f2.txt"} {
				assert.FileExists(t, filepath.Join(e.work, file))
			}

			pr, err = f.PR(ctx, 1)
			require.NoError(t, err)
			assert.Equal(t, forge.StateMerged, pr.State)
			assert.Equal(t, head, pr.HeadSHA)
			out, err := exec.Command("git", "-C", e.bare, "rev-parse", "--verify", "--quiet", "refs/heads/feature").Output()
			assert.Error(t, err, "branch deleted, got %s", out)

			// Merging again is fine and changes nothing.
			require.NoError(t, f.Merge(ctx, pr.Number, method, true, ""))
			assert.Equal(t, newMain, gittest.Run(t, e.bare, "rev-parse", "main"))
			rec, err := f.Record(ctx, 1)
			require.NoError(t, err)
			assert.Equal(t, string(method), rec.MergeMethod)
			assert.Equal(t, newMain, rec.MergeCommit)
			e.noWorkTrees(t)
		})
	}
}

func TestMergeRetryAfterCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	pr := e.openPR(t, f)
	// As if a merge moved main and the process died before recording it.
	gittest.Run(t, e.bare, "update-ref", "refs/heads/main", "refs/heads/feature")
	require.NoError(t, f.Merge(ctx, pr.Number, forge.MergeSquash, false, ""))
	assert.Equal(t, gittest.Run(t, e.bare, "rev-parse", "feature"), gittest.Run(t, e.bare, "rev-parse", "main"), "no second, empty commit")
	pr, err := f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateMerged, pr.State)
}

func TestMergeKeepsBranchPushedAfterMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	pr := e.openPR(t, f)
	require.NoError(t, f.Merge(ctx, pr.Number, forge.MergeMerge, false, ""))
	later := gittest.Commit(t, e.work, "late.txt", "late\n", "late")
	gittest.Run(t, e.work, "push", "-q", "origin", "feature")
	require.NoError(t, f.Merge(ctx, pr.Number, forge.MergeMerge, true, ""))
	assert.Equal(t, later, gittest.Run(t, e.bare, "rev-parse", "refs/heads/feature"))
}

func TestMergeRefusesAMovedHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	verified := e.branch(t, "feature", map[string]string{"b.txt": "b\n"})
	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature", Base: "main", Title: "B"})
	require.NoError(t, err)
	gittest.Commit(t, e.work, "c.txt", "c\n", "unverified")
	gittest.Run(t, e.work, "push", "-q", "origin", "feature")

	err = f.Merge(ctx, pr.Number, forge.MergeSquash, false, verified)
	require.ErrorIs(t, err, forge.ErrHeadChanged)
	after, err := f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateOpen, after.State, "nothing merged")
}
