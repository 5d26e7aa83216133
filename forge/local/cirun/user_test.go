//go:build unix

package cirun_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/local/cirun"
	"github.com/agenttree/agenttree/internal/ostest"
)

// With a user, CI runs as that user in a checkout handed over to it; a
// symlink in the checkout (a commit may hold one to any of the host's
// files) is handed over, never what it points at. A temporary directory
// that others could already reach is not handed over at all.
func TestMainRunsCIAsTheUser(t *testing.T) {
	u := ostest.OtherUser(t)
	tests := []struct {
		name    string
		open    bool // the attempt's temporary directory is 0755 before the run
		want    cirun.Result
		wantLog []string
	}{
		{name: "the checkout is the user's", want: cirun.Result{Exit: 0},
			wantLog: []string{strconv.Itoa(u.UID) + "\nowned\n"}},
		{name: "a temporary directory open to others", open: true, want: cirun.Result{Exit: 126, Environment: cirun.EnvStart},
			wantLog: []string{"agenttree: cannot run CI in ", "hand the work tree over to " + u.Name + ":", "not a directory closed to other users"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newAttempt(t, `id -u; test -O . && test -O a.txt && test -L host && test ! -O host && echo owned`)
			a.User = u.Name
			ostest.OpenUp(t, filepath.Dir(a.Bare))
			hostFile := filepath.Join(t.TempDir(), "host.txt")
			require.NoError(t, os.WriteFile(hostFile, []byte("the host's\n"), 0o644))
			require.NoError(t, os.Symlink(hostFile, filepath.Join(a.Worktree, "host")))
			if tt.open {
				require.NoError(t, os.Chmod(filepath.Dir(a.Worktree), 0o755))
			}

			var stderr bytes.Buffer
			require.Equal(t, 0, cirun.Main(context.Background(), a.Args(), &stderr), stderr.String())
			res, ok := cirun.ReadResult(a.ResultFile)
			require.True(t, ok)
			res.At = time.Time{}
			assert.Equal(t, tt.want, res)
			log, err := os.ReadFile(a.LogFile)
			require.NoError(t, err)
			for _, s := range tt.wantLog {
				assert.Contains(t, string(log), s)
			}
			fi, err := os.Stat(hostFile)
			require.NoError(t, err)
			assert.EqualValues(t, os.Geteuid(), fi.Sys().(*syscall.Stat_t).Uid, "the link's target stays the host's")
			noWorkTrees(t, a)
		})
	}
}
