//go:build etcd

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
	clientv3 "go.etcd.io/etcd/client/v3"

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
// work, the stage documents stay in _agenttree/, and no
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

// A repository's issues moved to etcd and back through the command:
// verify passes on each side, the state moves on at each, and the files
// caught up at the end hold the log etcd held, byte for byte.
func TestMigrateToEtcdAndBack(t *testing.T) {
	w, c := etcdWorkspace(t, "/agenttree/moved")
	inFiles := strings.Replace(etcdState(c, "/agenttree/moved"), "  backend: etcd\n", "", 1)
	require.NoError(t, os.WriteFile(w.config, []byte(testpipeline.Read(t, "cli")+inFiles), 0o644))
	for _, title := range []string{"Add login page", "Fix logout", "Park this"} {
		w.create(t, title, "--stage", "implement.code")
	}
	w.writeDoc(t, 1, "notes.md", notesDone)
	require.Equal(t, 0, w.run(t, agentEnv, "next", "-i", "1").code)
	// A message waiting in files moves with the state: not lost when the
	// config says etcd.
	require.Equal(t, 0, w.run(t, humanEnv, "send", "3", "waiting for the agent").code)

	r := w.run(t, humanEnv, "migrate", "--to", "etcd")
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "3 issues moved from files to etcd at "+c.Endpoint+" under /agenttree/moved: 3 copied")
	assert.Contains(t, r.stdout, "issue 3: copied (1 lines, head ")
	assert.Contains(t, r.stdout, "; 1 message of its outbox)")
	assert.Contains(t, r.stdout, "tls: {ca: etcd/ca.pem, cert: etcd/client.pem, key: etcd/client-key.pem}")

	require.NoError(t, os.WriteFile(w.config, []byte(testpipeline.Read(t, "cli")+etcdState(c, "/agenttree/moved")), 0o644))
	r = w.run(t, humanEnv, "verify")
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "issue 1: ok (2 events, version 2)")
	assert.Contains(t, r.stdout, "3 issues: 3 consistent")
	r = w.run(t, humanEnv, "inbox", "3")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "waiting for the agent", "the message waits in etcd")
	require.NoError(t, os.RemoveAll(filepath.Join(w.hostDir(3), "outbox")), "the files' copy is not read")
	r = w.run(t, humanEnv, "inbox", "3")
	assert.Contains(t, r.stdout, "waiting for the agent")
	w.writeDoc(t, 2, "notes.md", notesDone)
	require.Equal(t, 0, w.run(t, agentEnv, "next", "-i", "2").code, "the state moves on in etcd")

	r = w.run(t, humanEnv, "migrate", "--to", "files", "--json")
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `"action": "caught up"`)
	assert.Contains(t, r.stdout, `"ok": true`)

	require.NoError(t, os.WriteFile(w.config, []byte(testpipeline.Read(t, "cli")+inFiles), 0o644))
	r = w.run(t, humanEnv, "verify")
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "issue 2: ok (2 events, version 2)")
	assert.Equal(t, "implement.feedback", w.issue(t, 2).Stage)

	lines, err := c.Client(t).Get(context.Background(), "/agenttree/moved/issues/0000000002/log/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	require.NoError(t, err)
	var log strings.Builder
	for _, kv := range lines.Kvs {
		log.Write(kv.Value)
	}
	files, err := os.ReadFile(filepath.Join(w.hostDir(2), "events.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, log.String(), string(files), "the log etcd held, byte for byte")
}

// Over etcd the outboxes are shared: a message `send` queues in one
// checkout (no agent's session there to type it into) is in `inbox` of
// another checkout of the same repository, on another host, whose
// config names the same cluster and prefix; neither keeps it in files.
func TestEtcdSendOnOneCheckoutIsInTheInboxOfAnother(t *testing.T) {
	w, c := etcdWorkspace(t, "/agenttree/shared")
	dir := t.TempDir()
	certs := filepath.Join(w.dir, "etcd") + string(filepath.Separator)
	other := &workspace{dir: dir, config: filepath.Join(dir, stages.FileName)}
	require.NoError(t, os.WriteFile(other.config, []byte(testpipeline.Read(t, "cli")+strings.ReplaceAll(etcdState(c, "/agenttree/shared"), "etcd/", certs)), 0o644))
	id := w.create(t, "Add login page", "--stage", "implement.code")

	r := w.run(t, humanEnv, "send", itoa(id), "the login form needs labels")
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "queued (message ")

	r = other.run(t, humanEnv, "inbox", itoa(id))
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "issue 1: 1 undelivered")
	assert.Contains(t, r.stdout, "the login form needs labels")
	for _, co := range []*workspace{w, other} {
		assert.NoDirExists(t, filepath.Join(co.hostDir(id), "outbox"), "not in files")
	}
	got, err := c.Client(t).Get(context.Background(), "/agenttree/shared/issues/0000000001/outbox/q/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.EqualValues(t, 1, got.Count, "in etcd, under the issue's keys")
}
