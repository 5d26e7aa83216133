//go:build etcd

package migratecmd

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

func TestNewCmdMigrate(t *testing.T) {
	cmdtest.CheckFlags(t, []cmdtest.Flags{
		{Name: "to etcd", Run: cmdtest.Flagged(newCmdMigrate, "--to", "etcd", "--json"), Want: &Options{To: "etcd", JSON: true}},
		{Name: "to files", Run: cmdtest.Flagged(newCmdMigrate, "--to", "files"), Want: &Options{To: "files"}},
		{Name: "an argument", Run: cmdtest.Flagged(newCmdMigrate, "--to", "files", "3"), Err: "migrate"},
	})
}

// workspace is the cli pipeline with two issues in files, its config
// naming the etcd c under prefix (backend files).
func workspace(t *testing.T, c *etcdtest.Cluster, prefix string) *cmdtest.Workspace {
	t.Helper()
	w := cmdtest.NewWith(t, testpipeline.Read(t, "cli")+"\nstate:\n  etcd:\n    endpoints: ["+c.Endpoint+"]\n    prefix: "+prefix+"\n")
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	for _, title := range []string{"Add login page", "Fix logout"} {
		_, err = e.Create(context.Background(), engine.NewIssue{Title: title, Stage: "implement.code"})
		require.NoError(t, err)
	}
	w.Reset()
	return w
}

// What migrate refuses, each saying what to do, with nothing written.
func TestMigrateRefused(t *testing.T) {
	c := etcdtest.Start(t)
	tests := []struct {
		name    string
		opts    Options
		env     map[string]string
		prepare func(t *testing.T, w *cmdtest.Workspace)
		code    exitcode.Code
		err     []string
	}{
		{name: "no destination", opts: Options{To: "consul"}, code: exitcode.Usage, err: []string{"`--to etcd` or `--to files`"}},
		{name: "where it is", opts: Options{To: "files"}, code: exitcode.Usage, err: []string{"the state is kept in files already", "`agenttree migrate --to etcd`"}},
		{name: "an agent", opts: Options{To: "etcd"}, env: map[string]string{"AGENTTREE_ROLE": "developer"}, code: exitcode.Waiting, err: []string{"migrate is for people"}},
		{name: "a controller running", opts: Options{To: "etcd"}, code: exitcode.Waiting, prepare: func(t *testing.T, w *cmdtest.Workspace) {
			unlock, err := controller.Lock(cmdutil.StateDirOf(w.Config()))
			require.NoError(t, err)
			t.Cleanup(unlock)
		}, err: []string{"a controller is running for this repository", "stop it, then run `agenttree migrate --to etcd` again"}},
		{name: "a cluster out of reach", opts: Options{To: "etcd"}, code: exitcode.Usage, prepare: func(t *testing.T, w *cmdtest.Workspace) {
			w.Write(t, ".agenttree.yaml", testpipeline.Read(t, "cli")+"\nstate:\n  etcd: {endpoints: [http://127.0.0.1:9]}\n")
		}, err: []string{"the etcd cluster state.etcd names in ", "etcd at http://127.0.0.1:9: ", "`etcdctl --endpoints=http://127.0.0.1:9 endpoint health`"}},
		{name: "issues made at the destination", opts: Options{To: "etcd"}, code: exitcode.Blocked, prepare: func(t *testing.T, w *cmdtest.Workspace) {
			e, err := w.App.Etcd(t.Context(), mustConfig(t, w))
			require.NoError(t, err)
			st, err := issues.OpenWith(t.TempDir(), e)
			require.NoError(t, err)
			_, err = st.Create(t.Context(), &issues.Issue{Title: "Elsewhere", Slug: "elsewhere", Flow: "default", Stage: "backlog"}, "human")
			require.NoError(t, err)
		}, err: []string{"issue 1: its log is not the start of the source's", "nothing was written", "etcdctl --endpoints=" + c.Endpoint + " del --prefix /refused-5/"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := workspace(t, c, "/refused-"+string(rune('0'+i)))
			if tt.prepare != nil {
				tt.prepare(t, w)
				w.Reset()
			}
			for k, v := range tt.env {
				w.Env[k] = v
			}
			tt.opts.App = w.App
			err := migrateRun(t.Context(), &tt.opts)
			require.Error(t, err)
			assert.Equal(t, int(tt.code), cmdutil.ExitCode(err), "%v", err)
			for _, want := range tt.err {
				assert.Contains(t, err.Error(), want)
			}
			assert.Empty(t, w.Out.String())
		})
	}
}

func mustConfig(t *testing.T, w *cmdtest.Workspace) *stages.Config {
	t.Helper()
	cfg, _, err := w.App.LoadConfig()
	require.NoError(t, err)
	return cfg
}

// Moved to etcd and back, as JSON: every issue copied, then already
// there; the report says what to write in the config and how to remove
// the source.
func TestMigrateRun(t *testing.T) {
	c := etcdtest.Start(t)
	w := workspace(t, c, "/run")
	require.NoError(t, migrateRun(t.Context(), &Options{App: w.App, To: "etcd", JSON: true}))
	var rep Report
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &rep), w.Out.String())
	assert.True(t, rep.OK)
	require.Len(t, rep.Issues, 2)
	assert.Equal(t, "copied", string(rep.Issues[0].Action))
	assert.Equal(t, "state:\n  backend: etcd\n  etcd:\n    endpoints: ["+c.Endpoint+"]\n    prefix: /run\n", rep.State)
	assert.Contains(t, rep.RemoveSource, "find ")
	assert.Contains(t, rep.Where, "etcd at "+c.Endpoint+" under /run")

	w.Reset()
	require.NoError(t, migrateRun(t.Context(), &Options{App: w.App, To: "etcd"}))
	out := w.Out.String()
	assert.Contains(t, out, "issue 1: already there (1 lines, head ")
	assert.Contains(t, out, "2 issues moved from files to etcd at "+c.Endpoint+" under /run: 0 copied, 0 caught up, 2 already there; last id 2")
	assert.Contains(t, out, "checked at the destination as `agenttree verify` checks: 2 consistent")
	assert.Contains(t, out, "In "+w.Config()+", write the state: block as\n\n  state:\n    backend: etcd\n")
	assert.NoError(t, w.App.Close())
}
