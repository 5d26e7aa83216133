package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// etcdState is the `state:` block of a repository kept in the cluster c
// under prefix, its certificates given relative to the config file.
func etcdState(c *etcdtest.Cluster, prefix string) string {
	return "\nstate:\n  backend: etcd\n  etcd:\n    endpoints: [" + c.Endpoint + "]\n    prefix: " + prefix +
		"\n    tls: {ca: etcd/ca.pem, cert: etcd/client.pem, key: etcd/client-key.pem}\n"
}

// etcdWorkspace is the cli pipeline kept in an etcd of its own that asks
// for client certificates, made in the repository's etcd/.
func etcdWorkspace(t *testing.T, prefix string) (*workspace, *etcdtest.Cluster) {
	t.Helper()
	dir := t.TempDir()
	c := etcdtest.StartTLS(t, filepath.Join(dir, "etcd"))
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(testpipeline.Read(t, "cli")+etcdState(c, prefix)), 0o644))
	return &workspace{dir: dir, config: path}, c
}

// A repository whose config says etcd keeps its issues' state there, over
// TLS with client certificates: issue create, next, status and verify
// work, the stage documents and outbox stay in _agenttree/, and no
// issue.yaml, log or watch.yaml is written under it.
func TestStateInEtcd(t *testing.T) {
	w, c := etcdWorkspace(t, "/agenttree/e2e")
	id := w.create(t, "Add login page", "--stage", "implement.code")
	require.Equal(t, 1, id)
	w.writeDoc(t, id, "notes.md", notesDone)

	r := w.run(t, agentEnv, "next", "-i", itoa(id), "--json")
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	res := decodeNext(t, r.stdout)
	assert.Equal(t, "advanced", res.Status)
	assert.Equal(t, "implement.feedback", res.To)

	r = w.run(t, humanEnv, "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Add login page")
	assert.Contains(t, r.stdout, "implement.feedback")

	r = w.run(t, humanEnv, "verify")
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "issue 1: ok (2 events, version 2)")
	assert.Empty(t, r.stderr, "no warning that the state is in files")

	got, err := c.Client(t).Get(context.Background(), "/agenttree/e2e/issues/0000000001/state")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1)
	assert.Contains(t, string(got.Kvs[0].Value), "stage: implement.feedback")

	state := filepath.Join(w.dir, "_agenttree")
	var written []string
	require.NoError(t, filepath.WalkDir(state, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Name() == "issue.yaml" || d.Name() == "watch.yaml" || strings.HasPrefix(d.Name(), "events.") || d.Name() == ".last-id":
			written = append(written, path)
		}
		return nil
	}))
	assert.Empty(t, written, "the issues' state is in etcd alone")
	assert.FileExists(t, filepath.Join(w.issueDir(id), "notes.md"), "the stage documents stay in files")
}

// A cluster that cannot be reached is said, naming its endpoint and the
// command that checks it, within the dial timeout; nothing is written.
func TestStateInEtcdUnreachable(t *testing.T) {
	w, c := etcdWorkspace(t, "/agenttree/gone")
	c.Stop()
	start := time.Now()
	r := w.run(t, humanEnv, "issue", "create", "Add login page")
	assert.NotEqual(t, 0, r.code)
	assert.Less(t, time.Since(start), 30*time.Second)
	for _, want := range []string{"the issues' state is in etcd (state.backend in " + w.config + ")", "etcd at " + c.Endpoint,
		"`etcdctl --endpoints=" + c.Endpoint + " --cacert=" + filepath.Join(w.dir, "etcd", "ca.pem")} {
		assert.Contains(t, r.stderr, want)
	}
	assert.NoDirExists(t, w.issueDir(1))
}
