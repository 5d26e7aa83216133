package statedir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/statedir"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// A first-layout state directory keeps every file: the host's move under
// host/, the documents stay, and running it again changes nothing.
func TestMigrateMovesTheHostFilesAndKeepsTheDocuments(t *testing.T) {
	root := filepath.Join(t.TempDir(), "_agenttree")
	write(t, filepath.Join(root, "issues", "001", "issue.yaml"), "id: 1\n")
	write(t, filepath.Join(root, "issues", "001", "events.jsonl"), "{}\n")
	write(t, filepath.Join(root, "issues", "001", "outbox", "m.yaml"), "to: agent\n")
	write(t, filepath.Join(root, "issues", "001", "review.md"), "# Review\n")
	write(t, filepath.Join(root, "issues", ".last-id"), "3\n")
	write(t, filepath.Join(root, "forge", "prs", "1.yaml"), "number: 1\n")
	l := statedir.Layout{Root: root}

	for range 2 {
		require.NoError(t, l.Migrate(t.Context()))
		for path, want := range map[string]string{
			filepath.Join(l.Issue(1), "issue.yaml"):       "id: 1\n",
			filepath.Join(l.Issue(1), "events.jsonl"):     "{}\n",
			filepath.Join(l.Issue(1), "outbox", "m.yaml"): "to: agent\n",
			filepath.Join(l.Docs(1), "review.md"):         "# Review\n",
			filepath.Join(l.HostIssues(), ".last-id"):     "3\n",
			filepath.Join(l.Forge(), "prs", "1.yaml"):     "number: 1\n",
		} {
			got, err := os.ReadFile(path)
			require.NoError(t, err, path)
			assert.Equal(t, want, string(got), path)
		}
		assert.NoFileExists(t, filepath.Join(l.Docs(1), "issue.yaml"))
	}
}

// No state directory yet: nothing is created.
func TestMigrateLeavesANewRepositoryAlone(t *testing.T) {
	root := filepath.Join(t.TempDir(), "_agenttree")
	require.NoError(t, statedir.Layout{Root: root}.Migrate(t.Context()))
	assert.NoDirExists(t, root)
}

func TestDocsDirectoryIsGroupWritable(t *testing.T) {
	l := statedir.Layout{Root: t.TempDir()}
	require.NoError(t, l.MkdirDocs(4))
	fi, err := os.Stat(l.Docs(4))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o775)|os.ModeSetgid, fi.Mode()&(os.ModePerm|os.ModeSetgid))
}
