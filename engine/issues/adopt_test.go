package issues_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/statedir"
)

// An issue from before chains is adopted only if the host alone could
// have written it: one another user wrote, or one in a directory others
// may write, is left as it is, with a warning naming it, and refused
// until a person adopts it.
func TestOnlyTheHostsIssuesAreAdopted(t *testing.T) {
	u := ostest.OtherUser(t)
	for _, tt := range []struct {
		name string
		// expose makes issue 1's files another's, before the migration
		// (first layout) or while its adoption is due (moved).
		expose func(t *testing.T, l statedir.Layout) string
		found  bool
	}{
		{"first layout, another user's issue.yaml", func(t *testing.T, l statedir.Layout) string {
			path := filepath.Join(l.Docs(1), "issue.yaml")
			require.NoError(t, os.Lchown(path, u.UID, u.GID))
			return path
		}, false},
		{"first layout, in a directory its group may write", func(t *testing.T, l statedir.Layout) string {
			require.NoError(t, os.Chmod(l.Docs(1), 0o775))
			return filepath.Join(l.Docs(1), "issue.yaml")
		}, false},
		{"moved, another user's events.jsonl", func(t *testing.T, l statedir.Layout) string {
			m, err := l.Migrate(context.Background()) // a crash before the adoption
			require.NoError(t, err)
			require.True(t, m.Adopt)
			path := filepath.Join(l.Issue(1), "events.jsonl")
			require.NoError(t, os.Lchown(path, u.UID, u.GID))
			return path
		}, true},
		{"moved, in a directory everyone may write", func(t *testing.T, l statedir.Layout) string {
			_, err := l.Migrate(context.Background())
			require.NoError(t, err)
			require.NoError(t, os.Chmod(l.Issue(1), 0o777))
			return filepath.Join(l.Issue(1), "issue.yaml")
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, old := firstLayout(t)
			path := tt.expose(t, l)
			s, err := issues.Open(l.Root)
			require.NoError(t, err)
			warnings := strings.Join(s.Warnings(), "\n")
			assert.Contains(t, warnings, path+": left where it is, not adopted")

			_, err = s.Get(old.ID)
			if !tt.found {
				require.ErrorIs(t, err, issues.ErrNotFound, "it stayed beside the documents")
				return
			}
			var te *issues.TamperedError
			require.ErrorAs(t, err, &te, "never taken for the host's")
			assert.Contains(t, err.Error(), "as if it came from before chains")

			again, err := issues.Open(l.Root)
			require.NoError(t, err)
			assert.Empty(t, again.Warnings(), "the migration is over")
			_, err = again.Get(old.ID)
			require.ErrorAs(t, err, &te, "and nothing adopts it later")
		})
	}
}
