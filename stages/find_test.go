package stages_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestFindWalksUp(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, stages.FileName), []byte("stages: [{name: a}]\n"), 0o644))
	deep := filepath.Join(root, "x", "y")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	got, err := stages.Find(deep)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, stages.FileName), got)

	_, err = stages.Find(t.TempDir())
	require.ErrorContains(t, err, "agenttree init")
}

// The search ends at the root of the git work tree: a config in a
// directory above a repository is someone else's.
func TestFindStopsAtTheRepositoryRoot(t *testing.T) {
	above := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(above, stages.FileName), []byte("stages: [{name: a}]\n"), 0o644))
	for _, gitEntry := range []string{"dir", "file"} {
		t.Run(gitEntry, func(t *testing.T) {
			repo := filepath.Join(above, "repo-"+gitEntry)
			deep := filepath.Join(repo, "src", "pkg")
			require.NoError(t, os.MkdirAll(deep, 0o755))
			if gitEntry == "dir" {
				require.NoError(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
			} else { // a linked worktree or a submodule
				require.NoError(t, os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: /elsewhere\n"), 0o644))
			}
			_, err := stages.Find(deep)
			var nf *stages.NotFoundError
			require.ErrorAs(t, err, &nf)
			assert.Equal(t, repo, nf.Repo)
			assert.ErrorContains(t, err, "no .agenttree.yaml in the git repository at "+repo)
			assert.ErrorContains(t, err, "run `agenttree init` there")

			require.NoError(t, os.WriteFile(filepath.Join(repo, stages.FileName), []byte("stages: [{name: a}]\n"), 0o644))
			got, err := stages.Find(deep)
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(repo, stages.FileName), got)
		})
	}
}
