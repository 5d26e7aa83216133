package statedir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/statedir"
)

// A migration takes as the host's only what the host alone could have
// written and put there. What another user owns, or what sits in a
// directory others may write, is left where it is, named in a warning;
// while the state directory or a directory above it is writable by
// others, nothing is migrated at all, and the next run tries again.
func TestMigrateAdoptsOnlyWhatTheHostAloneWrote(t *testing.T) {
	u := ostest.OtherUser(t)
	issue := func(l statedir.Layout, name string) string { return filepath.Join(l.Root, "issues", "001", name) }
	for _, tt := range []struct {
		name string
		// expose makes part of the first layout someone else's.
		expose func(t *testing.T, l statedir.Layout)
		// left are the paths (relative to the state directory) left alone.
		left []string
		why  string
	}{
		{"a file another user owns", func(t *testing.T, l statedir.Layout) {
			require.NoError(t, os.Lchown(issue(l, "issue.yaml"), u.UID, u.GID))
		}, []string{"issues/001/issue.yaml"}, "owned by " + statedir.UserName(u.UID)},
		{"an issue's directory its group may write", func(t *testing.T, l statedir.Layout) {
			require.NoError(t, os.Chmod(filepath.Dir(issue(l, "issue.yaml")), 0o775))
		}, []string{"issues/001/issue.yaml", "issues/001/events.jsonl", "issues/001/outbox"}, "its group"},
		{"a file everyone may write", func(t *testing.T, l statedir.Layout) {
			require.NoError(t, os.Chmod(issue(l, "events.jsonl"), 0o666))
		}, []string{"issues/001/events.jsonl"}, "everyone may write it"},
		{"a forge record another user owns", func(t *testing.T, l statedir.Layout) {
			require.NoError(t, os.Lchown(filepath.Join(l.Root, "forge", "prs", "1.yaml"), u.UID, u.GID))
		}, []string{"forge"}, filepath.Join("forge", "prs", "1.yaml") + ", and it is owned by"},
		{"a directory another user owns", func(t *testing.T, l statedir.Layout) {
			require.NoError(t, os.Lchown(filepath.Join(l.Root, "issues"), u.UID, u.GID))
		}, []string{"issues/.last-id", "issues/001/issue.yaml", "issues/001/events.jsonl", "issues/001/outbox"}, "owned by"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := firstLayout(t)
			tt.expose(t, l)
			m, err := l.Migrate(t.Context())
			require.NoError(t, err)
			assert.True(t, m.Adopt, "the rest is adopted")
			assert.Empty(t, m.NotMigrated)
			var left []string
			for _, la := range m.LeftAlone {
				rel, err := filepath.Rel(l.Root, la.Path)
				require.NoError(t, err)
				left = append(left, filepath.ToSlash(rel))
				assert.Contains(t, la.Why, tt.why)
				_, err = os.Lstat(la.Path)
				assert.NoError(t, err, "left where it was")
			}
			assert.ElementsMatch(t, tt.left, left)
			require.Len(t, m.Warnings(), len(tt.left))
			for i, w := range m.Warnings() {
				assert.Contains(t, w, m.LeftAlone[i].Path)
				assert.Contains(t, w, "not adopted")
			}
			for _, rel := range left {
				assert.NoFileExists(t, hostPath(l, rel), "%s is not taken into host/", rel)
			}
			if !contains(left, "forge") {
				_, err := chain.Records{Dir: l.ForgePRs()}.Read("1.yaml")
				require.NoError(t, err, "the record the host wrote is adopted")
			}
		})
	}
}

// hostPath is where the migration moves rel, a first-layout path.
func hostPath(l statedir.Layout, rel string) string {
	if rel == "forge" {
		return l.Forge()
	}
	return filepath.Join(l.Host(), rel)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The review's attack: with the state directory writable by the agents'
// group, an agent moves host/ aside and plants a first layout. Nothing is
// moved or adopted until the state directory is the host's alone, and
// then only what the host wrote.
func TestMigrateWaitsForAStateDirectoryOnlyTheHostWrites(t *testing.T) {
	for _, tt := range []struct {
		name   string
		expose func(t *testing.T, l statedir.Layout) (undo func())
	}{
		{"the state directory its group may write", func(t *testing.T, l statedir.Layout) func() {
			require.NoError(t, os.Chmod(l.Root, 0o775))
			return func() { require.NoError(t, os.Chmod(l.Root, 0o755)) }
		}},
		{"a directory above it everyone may write", func(t *testing.T, l statedir.Layout) func() {
			up := filepath.Dir(l.Root)
			require.NoError(t, os.Chmod(up, 0o777))
			return func() { require.NoError(t, os.Chmod(up, 0o755)) }
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := firstLayout(t)
			undo := tt.expose(t, l)
			for range 2 {
				m, err := l.Migrate(t.Context())
				require.NoError(t, err)
				assert.False(t, m.Adopt)
				assert.Contains(t, m.NotMigrated, "may write it")
				require.Len(t, m.Warnings(), 1)
				assert.Contains(t, m.Warnings()[0], "doctor --fix")
				assert.NoDirExists(t, l.Host(), "nothing is made or moved")
			}
			undo()
			m, err := l.Migrate(t.Context())
			require.NoError(t, err)
			assert.True(t, m.Adopt)
			assert.Empty(t, m.Warnings())
			assert.FileExists(t, filepath.Join(l.Issue(1), "issue.yaml"))
		})
	}
}

// A directory above the state directory that everyone may write but with
// the sticky bit (as /tmp) exposes nothing: others cannot rename or
// remove what is the host's in it.
func TestMigrateUnderAStickyDirectory(t *testing.T) {
	l := firstLayout(t)
	up := filepath.Dir(l.Root)
	require.NoError(t, os.Chmod(up, 0o777|os.ModeSticky))
	m, err := l.Migrate(t.Context())
	require.NoError(t, err)
	assert.True(t, m.Adopt)
	assert.Empty(t, m.Warnings())
}

// A host/ without its marker never starts an adoption, so it gets its
// marker (and the host's namespace) even while others may write the state
// directory; but nothing of the first layout is moved into it then.
func TestMigrateOfAHostWithoutItsMarkerUnderAWritableStateDirectory(t *testing.T) {
	l := firstLayout(t)
	require.NoError(t, os.MkdirAll(l.HostIssues(), statedir.HostMode))
	require.NoError(t, os.Chmod(l.Root, 0o775))
	m, err := l.Migrate(t.Context())
	require.NoError(t, err)
	assert.False(t, m.Adopt)
	assert.Empty(t, m.NotMigrated)
	assert.NotEmpty(t, l.HostNamespace(), "the marker is written")
	assert.NoFileExists(t, filepath.Join(l.Issue(1), "issue.yaml"), "nothing is moved")
	require.NotEmpty(t, m.LeftAlone)
	for _, la := range m.LeftAlone {
		assert.Contains(t, la.Why, l.Root+": its group")
	}
	assert.Equal(t, len(m.LeftAlone), len(l.FirstLayoutLeftovers()), "doctor lists them")
}
