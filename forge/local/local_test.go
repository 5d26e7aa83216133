package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/forge/local/localtest"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// TestMain serves as the forge's CI runner when the forge starts this
// binary as one; otherwise it keeps the developer's git configuration out
// of the tests, gives the git they run an identity, and runs them.
func TestMain(m *testing.M) {
	localtest.RunnerMain()
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

// newForge makes an env and opens a forge on it.
func newForge(t *testing.T, opts local.Options) (*env, *local.Forge) {
	t.Helper()
	e := newEnv(t)
	return e, e.forge(t, opts)
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

// feature pushes branch feature: main and one commit adding f.txt.
func (e *env) feature(t *testing.T) string {
	t.Helper()
	return e.branch(t, "feature", map[string]string{"f.txt": "f\n"})
}

// openPR pushes branch feature and opens a PR for it on f.
func (e *env) openPR(t *testing.T, f *local.Forge) *forge.PR {
	t.Helper()
	e.feature(t)
	pr, _, err := f.EnsurePR(context.Background(), forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	return pr
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
	list, err := (&gitx.Repo{Dir: e.bare}).Worktrees(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1, "work trees: %v", list)
	assert.True(t, list[0].Bare)
}

// atOnce makes n calls at the same time and waits for them all.
func atOnce(n int, call func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { call(i) })
	}
	wg.Wait()
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
	e, f := newForge(t, local.Options{})

	_, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.ErrorIs(t, err, forge.ErrNotFound)
	assert.Contains(t, err.Error(), "git push origin feature")

	sha := e.feature(t)
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
	e, f := newForge(t, local.Options{})
	e.feature(t)
	numbers := make([]int, 8)
	atOnce(len(numbers), func(i int) {
		pr, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
		if assert.NoError(t, err) {
			numbers[i] = pr.Number
		}
	})
	for _, n := range numbers {
		assert.Equal(t, 1, n)
	}
}

func TestReviewDecision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	strict := e.forge(t, local.Options{DismissStaleApprovals: true})
	pr := e.openPR(t, f)
	assert.Equal(t, forge.ReviewRequired, pr.ReviewDecision)

	require.NoError(t, f.Approve(ctx, pr.Number, "alice"))
	require.NoError(t, f.Approve(ctx, pr.Number, "alice"))
	pr, err := f.PR(ctx, pr.Number)
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
	e, f := newForge(t, local.Options{})
	pr := e.openPR(t, f)

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
	data, err := os.ReadFile(filepath.Join(e.state, "host", "forge", "prs", "1.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "state: closed")
}
