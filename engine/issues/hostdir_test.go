package issues_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/statedir"
)

// A host/ that another user put in place (an agent that could write
// _agenttree moved the host's aside and made its own, chains recomputed)
// is refused before anything is read from it; so is one its group may
// write, or a symbolic link.
func TestAHostDirectoryNotTheHostsIsRefused(t *testing.T) {
	u := ostest.OtherUser(t)
	tests := []struct {
		name string
		make func(t *testing.T, host string)
		want string
	}{
		{"another user's", func(t *testing.T, host string) { require.NoError(t, os.Chown(host, int(u.UID), int(u.GID))) }, "owned by"},
		{"group-writable", func(t *testing.T, host string) { require.NoError(t, os.Chmod(host, 0o775)) }, "may write it"},
		{"a symbolic link", func(t *testing.T, host string) {
			elsewhere := filepath.Join(t.TempDir(), "host")
			require.NoError(t, os.Rename(host, elsewhere))
			require.NoError(t, os.Symlink(elsewhere, host))
		}, "symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "_agenttree")
			_, err := issues.Open(root)
			require.NoError(t, err)
			host := statedir.Layout{Root: root}.Host()
			require.NoError(t, os.MkdirAll(host, 0o755))
			tt.make(t, host)
			_, err = issues.Open(root)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "agenttree doctor")
		})
	}
}
