package cmdutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

// The config is looked for within the repository, and from a linked
// worktree whose branch has none it is the main checkout's.
func TestConfigFileWithinTheRepository(t *testing.T) {
	gittest.Require(t)
	gittest.Isolate(t)
	above := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(above, stages.FileName), []byte("stages: [{name: a}]\n"), 0o644))
	repo := filepath.Join(above, "repo")
	require.NoError(t, os.Mkdir(repo, 0o755))
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	gittest.Commit(t, repo, "README.md", "hello\n", "first")

	app := func(wd string) *App { return &App{WD: wd, Getenv: func(string) string { return "" }} }
	_, err := app(repo).ConfigFile()
	require.ErrorContains(t, err, "no .agenttree.yaml in the git repository at "+repo)

	// The config is not committed: the worktree's branch has none.
	require.NoError(t, os.WriteFile(filepath.Join(repo, stages.FileName), []byte("stages: [{name: a}]\n"), 0o644))
	wt := filepath.Join(above, "wt")
	gittest.Run(t, repo, "worktree", "add", "-q", "-b", "issue-1", wt)
	a := app(filepath.Join(wt))
	got, err := a.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(repo, stages.FileName), got)
	assert.Equal(t, wt, a.WorkDir, "hooks check the worktree the command ran in")
}
