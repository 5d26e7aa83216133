package controllercmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/stages"
)

// A controller elected over one cluster and prefix keeps them: a config
// reloaded that names another place for the state is refused, its last
// good config kept, since the store the term fences is the first one's.
func TestAReloadMayNotMoveTheState(t *testing.T) {
	cfgOf := func(backend stages.StateBackend, endpoint, prefix string) *stages.Config {
		c := &stages.Config{File: "/repo/.agenttree.yaml", Project: "shop"}
		c.State.Backend = backend
		c.State.Etcd.Endpoints = []string{endpoint}
		c.State.Etcd.Prefix = prefix
		return c
	}
	first := cfgOf(stages.StateEtcd, "https://etcd-1:2379", "")
	for _, tt := range []struct {
		name string
		next *stages.Config
		ok   bool
	}{
		{"the same cluster, other settings", cfgOf(stages.StateEtcd, "https://etcd-1:2379", ""), true},
		{"the same prefix written out", cfgOf(stages.StateEtcd, "https://etcd-1:2379", "/agenttree/shop"), true},
		{"another cluster", cfgOf(stages.StateEtcd, "https://etcd-2:2379", ""), false},
		{"another prefix", cfgOf(stages.StateEtcd, "https://etcd-1:2379", "/elsewhere"), false},
		{"back to files", cfgOf(stages.StateFiles, "https://etcd-1:2379", ""), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			load := sameCluster(first, func() (*engine.Engine, error) { return &engine.Engine{Config: tt.next}, nil })
			e, err := load()
			if tt.ok {
				require.NoError(t, err)
				assert.Same(t, tt.next, e.Config)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "/repo/.agenttree.yaml: state: now names another place for the issues' state")
		})
	}
}
