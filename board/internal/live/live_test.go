package live_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/board/internal/live"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/issues/filestore"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// A change of an issue's state, made by another process, reaches an open
// stream whether the state is in files (the hub's stat) or in etcd (the
// store's own watch: no file changes there).
func TestAChangeOfTheStateReachesTheStream(t *testing.T) {
	var cluster *etcdtest.Cluster
	for _, where := range []string{"files", "etcd"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, stages.FileName)
			require.NoError(t, os.WriteFile(path, []byte(testpipeline.Read(t, "cli")), 0o644))
			root := filepath.Join(dir, "_agenttree")
			backendOf := func() backend.Backend {
				if where == "files" {
					return filestore.Open(root)
				}
				if cluster == nil {
					cluster = etcdtest.Start(t)
				}
				b := etcdstore.New(cluster.Client(t), "/agenttree/live")
				t.Cleanup(func() { b.Close() })
				return b
			}
			open := func() *engine.Engine {
				reg := builtin.Registry()
				cfg, err := load.File(path, reg)
				require.NoError(t, err)
				st, err := issues.OpenWith(root, backendOf())
				require.NoError(t, err)
				return engine.New(cfg, st, reg, nil)
			}
			e, other := open(), open()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			iss, err := other.Create(ctx, engine.NewIssue{Title: "Add login page", Stage: "implement.code"})
			require.NoError(t, err)

			h := live.New()
			go h.Watch(ctx, func() (*engine.Engine, error) { return e, nil }, 20*time.Millisecond, slog.New(slog.DiscardHandler))
			s := h.Open(iss.ID)
			defer s.Close()
			changed := func() bool {
				select {
				case <-s.Changed():
					return true
				case <-time.After(500 * time.Millisecond):
					return false
				}
			}
			require.Eventually(t, changed, 30*time.Second, time.Millisecond, "the first look tells every stream")
			for changed() {
			}
			_, err = other.Store.Update(ctx, iss.ID, iss.Version, func(i *issues.Issue) error { i.Title = "Add the login page"; return nil })
			require.NoError(t, err)
			require.Eventually(t, changed, 30*time.Second, time.Millisecond, "the change reaches the stream")
		})
	}
}
