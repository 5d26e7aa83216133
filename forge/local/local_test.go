package local_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/gittest"
)

// TestMain keeps the developer's git configuration out of the tests, and
// gives the git they run an identity.
func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

type env struct {
	root, bare, work, state string
}

// newEnv makes a bare origin with main, and a working clone of it.
func newEnv(t *testing.T) *env {
	t.Helper()
	bare, work := gittest.NewRemote(t)
	return &env{root: filepath.Dir(bare), bare: bare, work: work, state: filepath.Join(work, "_agenttree")}
}

func (e *env) forge(t *testing.T, opts local.Options) *local.Forge {
	t.Helper()
	opts.StateDir, opts.RepoDir = e.state, e.work
	f, err := local.New(context.Background(), opts)
	require.NoError(t, err)
	return f
}

// branch makes branch from main with one commit per file and pushes it.
func (e *env) branch(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	gittest.Run(t, e.work, "checkout", "-q", "-B", name, "origin/main")
	var sha string
	for file, content := range files {
		sha = gittest.Commit(t, e.work, file, content, "add "+file)
	}
	gittest.Run(t, e.work, "push", "-q", "-f", "origin", name)
	return sha
}

// pushMain adds a commit to main on origin.
func (e *env) pushMain(t *testing.T, file, content string) string {
	t.Helper()
	gittest.Run(t, e.work, "checkout", "-q", "-B", "main", "origin/main")
	sha := gittest.Commit(t, e.work, file, content, "main: "+file)
	gittest.Run(t, e.work, "push", "-q", "origin", "main")
	return sha
}

// noWorkTrees checks that the forge removed the work trees it made for CI
// runs and rebase merges.
func (e *env) noWorkTrees(t *testing.T) {
	t.Helper()
	assert.Equal(t, "(bare)", strings.Fields(gittest.Run(t, e.bare, "worktree", "list"))[1])
	assert.Len(t, strings.Split(gittest.Run(t, e.bare, "worktree", "list"), "\n"), 1)
}

func TestNewNeedsLocalBareRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)

	cases := map[string]string{
		"https":     "https://github.com/x/y.git",
		"scp":       "git@github.com:x/y.git",
		"not bare":  e.work,
		"missing":   filepath.Join(e.root, "nowhere.git"),
		"plain dir": t.TempDir(),
	}
	for name, url := range cases {
		gittest.Run(t, e.work, "remote", "add", "r-"+strings.ReplaceAll(name, " ", "-"), url)
	}
	for name := range cases {
		_, err := local.New(ctx, local.Options{StateDir: e.state, RepoDir: e.work, Remote: "r-" + strings.ReplaceAll(name, " ", "-")})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "bare repository on this machine", name)
		assert.Contains(t, err.Error(), "git init --bare", name)
	}
	_, err := local.New(ctx, local.Options{StateDir: e.state, RepoDir: e.work, Remote: "upstream"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no remote "upstream"`)
	assert.Contains(t, err.Error(), "bare repository on this machine")
	assert.Contains(t, err.Error(), "git remote add upstream")

	_, err = local.New(ctx, local.Options{StateDir: e.state, RepoDir: t.TempDir()})
	assert.ErrorContains(t, err, "not a git repository")

	// file:// and relative paths are local too.
	gittest.Run(t, e.work, "remote", "add", "fileurl", "file://"+e.bare)
	gittest.Run(t, e.work, "remote", "add", "relative", "../origin.git")
	for _, r := range []string{"fileurl", "relative"} {
		f, err := local.New(ctx, local.Options{StateDir: e.state, RepoDir: e.work, Remote: r})
		require.NoError(t, err, r)
		assert.Equal(t, "main", f.DefaultBranch())
		real, _ := filepath.EvalSymlinks(e.bare)
		got, _ := filepath.EvalSymlinks(f.BareDir())
		assert.Equal(t, real, got)
	}
}

func TestEnsurePR(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.forge(t, local.Options{})

	_, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.ErrorIs(t, err, forge.ErrNotFound)
	assert.Contains(t, err.Error(), "git push origin feature")

	sha := e.branch(t, "feature", map[string]string{"f.txt": "f\n"})
	pr, created, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature", Title: "Add f"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 1, pr.Number)
	assert.Equal(t, "local:work#1", pr.URL)
	assert.Equal(t, "Add f", pr.Title)
	assert.Equal(t, "main", pr.Base)
	assert.Equal(t, sha, pr.HeadSHA)
	assert.Equal(t, forge.StateOpen, pr.State)
	assert.Equal(t, forge.Mergeable, pr.Mergeable)

	again, created, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature", Title: "Other title"})
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, 1, again.Number)
	assert.Equal(t, "Add f", again.Title)

	// A push moves the PR head.
	next := gittest.Commit(t, e.work, "g.txt", "g\n", "more")
	gittest.Run(t, e.work, "push", "-q", "origin", "feature")
	pr, err = f.PR(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, next, pr.HeadSHA)

	e.branch(t, "other", map[string]string{"o.txt": "o\n"})
	pr2, created, err := f.EnsurePR(ctx, forge.NewPR{Branch: "other"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 2, pr2.Number)
	assert.Equal(t, "other", pr2.Title)

	// A closed PR's branch gets a new PR.
	require.NoError(t, f.Close(ctx, 1, ""))
	pr3, created, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 3, pr3.Number)

	prs, err := f.PRs(ctx, []int{1, 2, 3, 99})
	require.NoError(t, err)
	assert.Len(t, prs, 3)
	assert.Equal(t, forge.StateClosed, prs[1].State)
	_, err = f.PR(ctx, 99)
	assert.ErrorIs(t, err, forge.ErrNotFound)

	_, _, err = f.EnsurePR(ctx, forge.NewPR{Branch: "main"})
	assert.Error(t, err)
}

func TestEnsurePRConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.forge(t, local.Options{})
	e.branch(t, "feature", map[string]string{"f.txt": "f\n"})
	var wg sync.WaitGroup
	numbers := make([]int, 8)
	for i := range numbers {
		wg.Go(func() {
			pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
			if assert.NoError(t, err) {
				numbers[i] = pr.Number
			}
		})
	}
	wg.Wait()
	for _, n := range numbers {
		assert.Equal(t, 1, n)
	}
}

func TestMergeability(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.forge(t, local.Options{})
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
			e := newEnv(t)
			f := e.forge(t, local.Options{})
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
	e := newEnv(t)
	f := e.forge(t, local.Options{})
	e.branch(t, "feature", map[string]string{"f.txt": "f\n"})
	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	// As if a merge moved main and the process died before recording it.
	gittest.Run(t, e.bare, "update-ref", "refs/heads/main", "refs/heads/feature")
	require.NoError(t, f.Merge(ctx, pr.Number, forge.MergeSquash, false, ""))
	assert.Equal(t, gittest.Run(t, e.bare, "rev-parse", "feature"), gittest.Run(t, e.bare, "rev-parse", "main"), "no second, empty commit")
	pr, err = f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateMerged, pr.State)
}

func TestMergeKeepsBranchPushedAfterMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.forge(t, local.Options{})
	e.branch(t, "feature", map[string]string{"f.txt": "f\n"})
	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	require.NoError(t, f.Merge(ctx, pr.Number, forge.MergeMerge, false, ""))
	later := gittest.Commit(t, e.work, "late.txt", "late\n", "late")
	gittest.Run(t, e.work, "push", "-q", "origin", "feature")
	require.NoError(t, f.Merge(ctx, pr.Number, forge.MergeMerge, true, ""))
	assert.Equal(t, later, gittest.Run(t, e.bare, "rev-parse", "refs/heads/feature"))
}

func TestReviewDecision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.forge(t, local.Options{})
	strict := e.forge(t, local.Options{DismissStaleApprovals: true})
	e.branch(t, "feature", map[string]string{"f.txt": "f\n"})
	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	assert.Equal(t, forge.ReviewRequired, pr.ReviewDecision)

	require.NoError(t, f.Approve(ctx, pr.Number, "alice"))
	require.NoError(t, f.Approve(ctx, pr.Number, "alice"))
	pr, err = f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.ReviewApproved, pr.ReviewDecision)
	rec, err := f.Record(ctx, pr.Number)
	require.NoError(t, err)
	require.Len(t, rec.Approvals, 1)
	assert.Equal(t, "alice", rec.Approvals[0].By)
	assert.Equal(t, pr.HeadSHA, rec.Approvals[0].SHA)

	// A push after approval: kept by default, dismissed when configured.
	gittest.Commit(t, e.work, "g.txt", "g\n", "after review")
	gittest.Run(t, e.work, "push", "-q", "origin", "feature")
	pr, err = f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.ReviewApproved, pr.ReviewDecision)
	pr, err = strict.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.ReviewRequired, pr.ReviewDecision)

	assert.ErrorIs(t, f.Approve(ctx, 42, "bob"), forge.ErrNotFound)
}

func TestCommentAndClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.forge(t, local.Options{})
	e.branch(t, "feature", map[string]string{"f.txt": "f\n"})
	pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)

	require.NoError(t, f.Comment(ctx, pr.Number, "looks good"))
	require.NoError(t, f.Close(ctx, pr.Number, "superseded"))
	require.NoError(t, f.Close(ctx, pr.Number, "superseded"), "closing twice is fine")
	rec, err := f.Record(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateClosed, rec.State)
	require.Len(t, rec.Comments, 2)
	assert.Equal(t, "looks good", rec.Comments[0].Body)
	assert.Equal(t, "superseded", rec.Comments[1].Body)

	assert.Error(t, f.Merge(ctx, pr.Number, forge.MergeSquash, false, ""), "a closed PR cannot be merged")
	assert.ErrorIs(t, f.Comment(ctx, 7, "x"), forge.ErrNotFound)

	// The record is plain YAML a person can read.
	data, err := os.ReadFile(filepath.Join(e.state, "forge", "prs", "1.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "state: closed")
}

func TestMergeRefusesAMovedHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.forge(t, local.Options{})
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
