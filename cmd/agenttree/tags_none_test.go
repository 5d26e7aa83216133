//go:build !etcd

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// buildTags are the tags the test binary was built with, for the
// agenttree it builds and runs as a process.
const buildTags = ""

// A build without etcd's client (the default: it costs every command its
// start-up) refuses a config that keeps the state in etcd, saying how to
// build one with it, and writes nothing.
func TestABuildWithoutEtcdSaysHowToGetIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(testpipeline.Read(t, "cli")+
		"\nstate:\n  backend: etcd\n  etcd:\n    endpoints: [https://127.0.0.1:2379]\n"), 0o644))
	w := &workspace{dir: dir, config: path}
	for _, args := range [][]string{{"status"}, {"issue", "create", "Add login page"}, {"migrate", "--to", "files"}} {
		r := w.run(t, humanEnv, args...)
		assert.NotEqual(t, 0, r.code, "%v", args)
		assert.Contains(t, r.stderr, "built without etcd's client", "%v", args)
		assert.Contains(t, r.stderr, "go install -tags etcd ./cmd/agenttree", "%v", args)
	}
	_, err := os.Stat(filepath.Join(dir, "_agenttree", "host", "issues"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")
}
