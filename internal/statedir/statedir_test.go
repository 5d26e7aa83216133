package statedir_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/internal/statedir"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// firstLayout is a state directory as agenttree left it before host/
// (and before hash chains): the host's files beside the documents.
func firstLayout(t *testing.T) statedir.Layout {
	t.Helper()
	root := filepath.Join(t.TempDir(), "_agenttree")
	write(t, filepath.Join(root, "issues", "001", "issue.yaml"), "id: 1\n")
	write(t, filepath.Join(root, "issues", "001", "events.jsonl"), "{}\n")
	write(t, filepath.Join(root, "issues", "001", "outbox", "m.yaml"), "to: agent\n")
	write(t, filepath.Join(root, "issues", "001", "review.md"), "# Review\n")
	write(t, filepath.Join(root, "issues", ".last-id"), "3\n")
	write(t, filepath.Join(root, "forge", "prs", "1.yaml"), "number: 1\n")
	write(t, filepath.Join(root, "forge", "checks", "abc.yaml"), "state: failure\n")
	hostsAlone(t, root)
	return statedir.Layout{Root: root}
}

// hostsAlone makes what is under root writable by its owner alone, as
// agenttree made it, whatever the umask.
func hostsAlone(t *testing.T, root string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Type()&fs.ModeSymlink != 0:
			return nil
		case d.IsDir():
			return os.Chmod(path, 0o755)
		}
		return os.Chmod(path, 0o644)
	}))
}

// A first-layout state directory keeps every file: the host's move under
// host/, the documents stay, and running it again changes nothing. Its
// forge records get their logs, and adoption stays due (a crash before
// the caller's part resumes it) until Adopted.
func TestMigrateMovesTheHostFilesAndKeepsTheDocuments(t *testing.T) {
	l := firstLayout(t)
	for range 2 {
		m, err := l.Migrate(t.Context())
		require.NoError(t, err)
		assert.True(t, m.Adopt, "adoption stays due until Adopted")
		assert.Empty(t, m.Warnings(), "all of it is the host's")
		for path, want := range map[string]string{
			filepath.Join(l.Issue(1), "issue.yaml"):       "id: 1\n",
			filepath.Join(l.Issue(1), "events.jsonl"):     "{}\n",
			filepath.Join(l.Issue(1), "outbox", "m.yaml"): "to: agent\n",
			filepath.Join(l.Docs(1), "review.md"):         "# Review\n",
			filepath.Join(l.HostIssues(), ".last-id"):     "3\n",
			filepath.Join(l.ForgePRs(), "1.yaml"):         "number: 1\n",
			filepath.Join(l.ForgeChecks(), "abc.yaml"):    "state: failure\n",
		} {
			got, err := os.ReadFile(path)
			require.NoError(t, err, path)
			assert.Equal(t, want, string(got), path)
		}
		assert.NoFileExists(t, filepath.Join(l.Docs(1), "issue.yaml"))
		for _, r := range []struct{ dir, name string }{{l.ForgePRs(), "1.yaml"}, {l.ForgeChecks(), "abc.yaml"}} {
			_, err := chain.Records{Dir: r.dir}.Read(r.name)
			require.NoError(t, err, "%s has its log", r.name)
		}
	}

	require.NoError(t, l.Adopted(t.Context()))
	m, err := l.Migrate(t.Context())
	require.NoError(t, err)
	assert.False(t, m.Adopt)
	assert.NotEmpty(t, l.HostNamespace(), "the marker keeps the host's namespace")
}

// Once migrated, nothing a person or an agent deletes makes state count
// as from before chains again: not the marker, not a record's log.
func TestMigrateAdoptsOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		delete func(l statedir.Layout) []string
	}{
		{"the marker", func(l statedir.Layout) []string { return []string{filepath.Join(l.Host(), "layout")} }},
		{"the marker and a record's log", func(l statedir.Layout) []string {
			return []string{filepath.Join(l.Host(), "layout"), filepath.Join(l.ForgePRs(), "1.chain.jsonl")}
		}},
		{"the whole host/ but its issues", func(l statedir.Layout) []string {
			return []string{filepath.Join(l.Host(), "layout"), l.Forge(), l.Sessions()}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := firstLayout(t)
			m, err := l.Migrate(t.Context())
			require.NoError(t, err)
			require.True(t, m.Adopt)
			require.NoError(t, l.Adopted(t.Context()))

			for _, path := range tt.delete(l) {
				require.NoError(t, os.RemoveAll(path))
			}
			write(t, filepath.Join(l.ForgePRs(), "2.yaml"), "number: 2\napprovals:\n  - by: alice\n")
			write(t, filepath.Join(l.Root, "forge", "prs", "3.yaml"), "number: 3\n") // as if first layout
			logs := chainLogs(t, l.Root)
			for range 2 {
				m, err = l.Migrate(t.Context())
				require.NoError(t, err)
				assert.False(t, m.Adopt)
			}
			assert.FileExists(t, filepath.Join(l.Host(), "layout"), "the marker is written again")
			assert.Equal(t, logs, chainLogs(t, l.Root), "no log was started")
			_, err = chain.Records{Dir: l.ForgePRs()}.Read("2.yaml")
			require.ErrorIs(t, err, chain.ErrUnlogged)
		})
	}
}

// chainLogs are the records' logs under root.
func chainLogs(t *testing.T, root string) []string {
	t.Helper()
	var logs []string
	require.NoError(t, filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if strings.HasSuffix(path, ".chain.jsonl") {
			logs = append(logs, path)
		}
		return err
	}))
	return logs
}

// A crash anywhere in a migration is resumed: host/ appears with the
// marker that says adoption is due, and it stays due whatever was moved.
func TestMigrateResumesAfterACrash(t *testing.T) {
	l := firstLayout(t)
	// What a crash after the first moves leaves.
	write(t, filepath.Join(l.Host(), "layout"), "layout: 2\nadopt_unchained: true\n")
	require.NoError(t, os.MkdirAll(l.Issue(1), 0o755))
	require.NoError(t, os.Rename(filepath.Join(l.Docs(1), "issue.yaml"), filepath.Join(l.Issue(1), "issue.yaml")))

	m, err := l.Migrate(t.Context())
	require.NoError(t, err)
	assert.True(t, m.Adopt)
	assert.FileExists(t, filepath.Join(l.Issue(1), "events.jsonl"))
	assert.FileExists(t, filepath.Join(l.ForgePRs(), "1.chain.jsonl"))
	entries, err := os.ReadDir(l.Root)
	require.NoError(t, err)
	for _, e := range entries {
		assert.Contains(t, []string{"issues", "host"}, e.Name(), "nothing is left aside")
	}
}

// No state directory yet: nothing is created. A new one (host/ made by
// its first issue) has nothing to adopt.
func TestMigrateLeavesANewRepositoryAlone(t *testing.T) {
	root := filepath.Join(t.TempDir(), "_agenttree")
	l := statedir.Layout{Root: root}
	m, err := l.Migrate(t.Context())
	require.NoError(t, err)
	assert.False(t, m.Adopt)
	assert.NoDirExists(t, root)

	require.NoError(t, os.MkdirAll(l.HostIssues(), statedir.HostMode))
	m, err = l.Migrate(t.Context())
	require.NoError(t, err)
	assert.False(t, m.Adopt)
	assert.FileExists(t, filepath.Join(l.Host(), "layout"))
}

func TestDocsDirectoryIsGroupWritable(t *testing.T) {
	l := statedir.Layout{Root: t.TempDir()}
	require.NoError(t, l.MkdirDocs(4))
	fi, err := os.Stat(l.Docs(4))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o775)|os.ModeSetgid, fi.Mode()&(os.ModePerm|os.ModeSetgid))
}

// A symlink where a first-layout host file was is not taken into host/:
// agenttree never made one, and host/ must hold nothing that leads out.
func TestMigrateTakesNoSymlinkIntoHost(t *testing.T) {
	root := filepath.Join(t.TempDir(), "_agenttree")
	write(t, filepath.Join(root, "issues", "001", "issue.yaml"), "id: 1\n")
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(root, "issues", "001", "outbox")))
	l := statedir.Layout{Root: root}
	m, err := l.Migrate(t.Context())
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(l.Issue(1), "issue.yaml"))
	_, err = os.Lstat(filepath.Join(l.Issue(1), "outbox"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.Len(t, m.LeftAlone, 1, "it says so")
	assert.Equal(t, filepath.Join(root, "issues", "001", "outbox"), m.LeftAlone[0].Path)
	assert.Contains(t, m.LeftAlone[0].Why, "symbolic link")
}
