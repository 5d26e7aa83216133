//go:build etcd && unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// nodeAgent stands in for an agent: it notes each start on its host,
// then reads what is typed into its pane; told "please-next", it runs
// `agenttree next` as an agent that cannot write the state does, through
// its node's socket (%[1]s), and notes the answer.
const nodeAgent = `#!/bin/sh
echo "$AGENTTREE_ISSUE" >> "$0.starts"
while IFS= read -r line; do
  printf '%%s\n' "$line" >> "$0.received-$AGENTTREE_ISSUE"
  case "$line" in
  *please-next*)
    AGENTTREE_SOCKET=%[1]q %[2]q next -i "$AGENTTREE_ISSUE" > "$0.next-$AGENTTREE_ISSUE" 2>&1
    echo "exit=$?" >> "$0.next-$AGENTTREE_ISSUE" ;;
  esac
done
`

// nodesConfig is a pipeline whose agents run on nodes: each host's own
// tmux server and agent, the state in cluster c, reached over TLS with a
// client certificate.
func nodesConfig(socket, agent string, c *etcdtest.Cluster) string {
	return fmt.Sprintf(`project: shop
tmux: {socket: %q}
state:
  backend: etcd
  etcd:
    endpoints: [%s]
    prefix: /agenttree/shop-nodes
    tls: {ca: %q, cert: %q, key: %q}
  nodes: {capacity: 1}
agents:
  worker: {command: %q}
roles:
  developer: {agents: [worker], auto_start: true}
stages:
  - name: backlog
    parking_lot: true
  - name: work
    pre_completion:
      - section_check: {file: notes.md, section: Done, expect: not_empty}
  - name: accepted
    terminal: completion
`, socket, c.Endpoint, c.CA, c.Cert, c.Key, agent)
}

// host is one machine of the test: a checkout of the repository, its
// tmux server and its agent.
type host struct {
	*workspace
	tmux  *tmuxServer
	agent string
	log   *os.File
}

// newHost clones origin and writes the host's config beside it (each
// host's tmux and agent are its own; the state is shared).
func newHost(t *testing.T, origin string, c *etcdtest.Cluster) *host {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "checkout")
	gittest.Run(t, filepath.Dir(dir), "clone", "-q", origin, dir)
	bin := t.TempDir()
	agent := filepath.Join(bin, "agent")
	socket := statedir.Layout{Root: filepath.Join(dir, "_agenttree")}.Socket()
	require.NoError(t, os.WriteFile(agent, []byte(fmt.Sprintf(nodeAgent, socket, binary)), 0o755))
	server := newTmuxServer(t)
	config := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(config, []byte(nodesConfig(server.socket, agent, c)), 0o644))
	log, err := os.Create(filepath.Join(t.TempDir(), "process.log"))
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("%s's log:\n%s", dir, data)
		}
		log.Close()
	})
	return &host{workspace: &workspace{dir: dir, config: config}, tmux: server, agent: agent, log: log}
}

// start starts `agenttree ARGS` on h as a process of its own; one still
// running when the test ends is killed.
func (h *host) start(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := h.command(processEnv(), append(args, "--interval", "200ms")...)
	cmd.Stdout, cmd.Stderr = h.log, h.log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// hasSession reports whether h's tmux server has issue id's agent.
func (h *host) hasSession(id int) bool {
	_, err := h.tmux.output("has-session", "-t", "="+agentSession(id))
	return err == nil
}

// starts are the issues whose agents started on h, in order.
func (h *host) starts() []string {
	data, _ := os.ReadFile(h.agent + ".starts")
	return strings.Fields(string(data))
}

// newNodesWorld is an etcd cluster asking for client certificates and a
// bare origin with a first clone, for hosts to clone.
func newNodesWorld(t *testing.T) (cluster *etcdtest.Cluster, origin, first string) {
	t.Helper()
	cluster = etcdtest.StartTLS(t, filepath.Join(t.TempDir(), "certs"))
	gittest.Require(t)
	gittest.Isolate(t)
	origin, first = gittest.NewRemote(t)
	gittest.Commit(t, first, ".gitignore", "_agenttree/\n", "ignore the state")
	gittest.Commit(t, first, "README", "shop\n", "start")
	gittest.Run(t, first, "push", "-q", "origin", "main")
	return cluster, origin, first
}

// One controller on a host that runs no agents, two nodes with their own
// tmux servers. The controller gives each issue a node by room (one
// each); each node starts its issue's agent in its own tmux and types
// the stage's first message there, never into the other's, and a message
// a person sends on the controller's host (the outboxes are in etcd with
// the state). A node killed
// is seen gone within its lease, status says which issue waits, and a
// person moves it to the other node, which starts its agent; the killed
// node, back, stops the agent it had of the issue it no longer has.
func TestEtcdNodesRunTheirOwnAgents(t *testing.T) {
	cluster, origin, _ := newNodesWorld(t)

	ctl := newHost(t, origin, cluster)
	a, b := newHost(t, origin, cluster), newHost(t, origin, cluster)
	ctl.start(t, "controller")
	a.start(t, "node", "--name", "a")
	nodeB := b.start(t, "node", "--name", "b")

	// Both nodes alive before the issues come: each is given one by room.
	require.Eventually(t, func() bool {
		return strings.Contains(ctl.run(t, humanEnv, "status").stdout, "nodes: a (0 of 1), b (0 of 1)")
	}, settleWithin, lookEvery, "both nodes joined")
	one := ctl.create(t, "Add checkout page", "--stage", "work")
	require.Eventually(t, func() bool { return a.hasSession(one) }, settleWithin, lookEvery, "the first issue's agent runs on node a")
	two := ctl.create(t, "Add search", "--stage", "work")
	require.Eventually(t, func() bool { return b.hasSession(two) }, settleWithin, lookEvery, "the second issue's agent runs on node b, a being full")
	assert.False(t, b.hasSession(one), "no agent of the first issue on node b")
	assert.False(t, a.hasSession(two), "no agent of the second issue on node a")
	assert.False(t, ctl.hasSession(one) || ctl.hasSession(two), "no agent on the controller's host")
	res := ctl.run(t, humanEnv, "start", itoa(one))
	assert.NotEqual(t, exitOK, res.code, "a person's start where no node runs is refused")
	assert.Contains(t, res.stderr, "none runs in this checkout")
	res = b.run(t, humanEnv, "start", itoa(one))
	assert.NotEqual(t, exitOK, res.code, "a person's start on another node is refused")
	assert.Contains(t, res.stderr, fmt.Sprintf("issue %d's agent runs on node a, not on this one (b): start it there, or move it here with `agenttree assign %d --node b`", one, one))
	assert.False(t, b.hasSession(one))
	// The first message is typed into the node's own pane.
	require.Eventually(t, func() bool {
		out, err := a.tmux.captured(agentSession(one))
		return err == nil && strings.Contains(out, "[agenttree ")
	}, settleWithin, lookEvery, "the stage's first message typed into node a's pane")
	assert.Contains(t, ctl.run(t, humanEnv, "status").stdout, "nodes: a (1 of 1), b (1 of 1)")
	// A message a person sends on the controller's host waits in the
	// outbox in etcd, and node a types it into its agent's pane.
	sent := ctl.run(t, humanEnv, "send", itoa(one), "labels on the checkout form")
	require.Equal(t, exitOK, sent.code, sent.stdout+sent.stderr)
	assert.Contains(t, sent.stdout, "queued", "no agent on the controller's host")
	require.Eventually(t, func() bool {
		out, err := a.tmux.captured(agentSession(one))
		return err == nil && strings.Contains(out, "labels on the checkout form")
	}, settleWithin, lookEvery, "the message sent on another host typed into node a's pane")

	// The agent's next on its node: the gate reads the document written
	// there, and the move is in the shared state.
	r := a.run(t, agentEnv, "next", "-i", itoa(one))
	assert.Equal(t, exitBlocked, r.code, "no notes yet: %s", r.stdout+r.stderr)
	a.writeDoc(t, one, "notes.md", notesDone)
	r = a.run(t, agentEnv, "next", "-i", itoa(one))
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Contains(t, ctl.run(t, humanEnv, "issue", "show", itoa(one)).stdout, "accepted")

	// Node b is killed: within its lease status says its issue waits,
	// and a person moves the issue to node a, which starts its agent.
	kill(nodeB)
	require.Eventually(t, func() bool {
		return strings.Contains(ctl.run(t, humanEnv, "status").stdout, fmt.Sprintf("node b is gone: its issues %d wait", two))
	}, settleWithin, lookEvery, "status says node b is gone with its issue")
	res = ctl.run(t, humanEnv, "assign", itoa(two), "--node", "b")
	assert.Equal(t, exitUsage, res.code, "a node gone is refused: %s", res.stdout+res.stderr)
	assert.Contains(t, res.stderr, `node "b" is not alive (alive: a)`)
	res = ctl.run(t, agentEnv, "assign", itoa(two), "--node", "a")
	assert.NotEqual(t, exitOK, res.code, "an agent does not move issues")
	res = ctl.run(t, humanEnv, "assign", itoa(two), "--node", "a")
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, fmt.Sprintf("issue %d moved from node b to node a", two))
	require.Eventually(t, func() bool { return a.hasSession(two) }, settleWithin, lookEvery, "node a starts the moved issue's agent")

	// Its agent's next, asked on node a's socket from its pane's process
	// (the socket admits the session's own processes): node a answers,
	// its gate reading the document written there.
	said := a.agentNext(t, two)
	assert.Contains(t, said, "exit=1", "no notes yet")
	assert.Contains(t, said, "notes.md")
	a.writeDoc(t, two, "notes.md", notesDone)
	said = a.agentNext(t, two)
	require.Contains(t, said, "exit=0")
	assert.Contains(t, ctl.run(t, humanEnv, "issue", "show", itoa(two)).stdout, "accepted")

	// Node b back: the agent it still had of the issue moved is stopped.
	require.True(t, b.hasSession(two), "node b's tmux outlived its node")
	b.start(t, "node", "--name", "b")
	require.Eventually(t, func() bool { return !b.hasSession(two) }, settleWithin, lookEvery, "node b stops its agent of the issue moved away")
	assert.Equal(t, []string{itoa(one), itoa(two)}, a.starts(), "node a started each of its agents once")
	assert.Equal(t, []string{itoa(two)}, b.starts())
	assert.Contains(t, ctl.run(t, humanEnv, "status").stdout, "nodes: a (0 of 1), b (0 of 1)", "both issues finished")
	res = ctl.run(t, humanEnv, "verify")
	assert.Equal(t, exitOK, res.code, res.stdout+res.stderr)
}

// agentNext has issue id's agent on h run `next` through h's socket, and
// returns what it answered, with its exit status.
func (h *host) agentNext(t *testing.T, id int) string {
	t.Helper()
	out := fmt.Sprintf("%s.next-%d", h.agent, id)
	_ = os.Remove(out)
	h.tmux.run(t, "send-keys", "-t", "="+agentSession(id)+":", "-l", "please-next")
	h.tmux.run(t, "send-keys", "-t", "="+agentSession(id)+":", "Enter")
	var got string
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(out)
		got = string(data)
		return strings.Contains(got, "exit=")
	}, settleWithin, lookEvery, "the agent's next answered")
	return got
}

// received is what issue id's agent on h read from its pane.
func (h *host) received(id int) string {
	data, _ := os.ReadFile(fmt.Sprintf("%s.received-%d", h.agent, id))
	return string(data)
}

// issueOf is issue id as h's commands read it from the shared state.
func (h *host) issueOf(t *testing.T, id int) issues.Issue {
	t.Helper()
	res := h.run(t, humanEnv, "issue", "show", itoa(id), "--json")
	require.Equal(t, exitOK, res.code, res.stderr)
	var iss issues.Issue
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &iss), res.stdout)
	return iss
}

// awaitIssue waits until issue id, read on h, is as cond says.
func (h *host) awaitIssue(t *testing.T, id int, what string, cond func(*issues.Issue) bool) issues.Issue {
	t.Helper()
	var got issues.Issue
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got = h.issueOf(t, id)
		require.Truef(c, cond(&got), "issue %d is not %s yet: it is %s", id, what, describe(&got))
	}, settleWithin, lookEvery)
	return got
}

// worktree is where h's node made issue id's agent's work tree.
func (h *host) worktree(t *testing.T, id int) string {
	t.Helper()
	var rec struct{ Worktree string }
	require.Eventually(t, func() bool { // the record is written once the session runs
		data, err := os.ReadFile(statedir.Layout{Root: filepath.Join(h.dir, "_agenttree")}.AgentSession(id))
		return err == nil && yaml.Unmarshal(data, &rec) == nil && rec.Worktree != ""
	}, settleWithin, lookEvery, "issue %d's session record on %s", id, h.dir)
	return rec.Worktree
}

// The reference pipeline with its agent on a node: the agent commits in
// its work tree there and hands the issue over (push_branch); the
// controller, on a host without the agent's commits, opens the PR from
// what the node pushed, runs CI, which fails, and steps the issue back;
// the message reaches the agent's pane on its node, once and whole. The
// leader is SIGKILLed meanwhile and the standby takes over. The agent's
// fix reaches the PR the same way, a person approves on the controller's
// host, and the controller merges: origin's main holds the agent's work.
func TestEtcdNodesCarryTheReferencePipeline(t *testing.T) {
	cluster, origin, first := newNodesWorld(t)
	pipeline := strings.Replace(testpipeline.Read(t, "controller-merges"), "          - has_commits:\n", "          - has_commits:\n          - push_branch:\n", 1)
	require.Contains(t, pipeline, "push_branch")
	withPipeline := func(h *host) {
		data, err := os.ReadFile(h.config)
		require.NoError(t, err)
		cfg := string(data)
		cfg = cfg[:strings.Index(cfg, "stages:")]
		cfg = strings.Replace(cfg, "project: shop\n", "", 1)
		require.NoError(t, os.WriteFile(h.config, []byte(pipeline+cfg), 0o644))
	}
	ctl, a := newHost(t, origin, cluster), newHost(t, origin, cluster)
	withPipeline(ctl)
	withPipeline(a)
	leader := ctl.start(t, "controller")
	standby := ctl.start(t, "controller")
	a.start(t, "node", "--name", "a")

	id := ctl.create(t, "Add checkout page", "--stage", "implement.code")
	require.Eventually(t, func() bool { return a.hasSession(id) }, settleWithin, lookEvery, "the agent runs on node a")
	work := a.worktree(t, id)
	gittest.Commit(t, work, "checkout.txt", "checkout\n", "checkout page")
	said := a.agentNext(t, id)
	require.Contains(t, said, "exit=0", "implement.code → implement.feedback")
	said = a.agentNext(t, id)
	require.Contains(t, said, "exit=0", "implement.feedback → pr_ready, the branch pushed")
	assert.Equal(t, gittest.Run(t, work, "rev-parse", "HEAD"), gittest.Run(t, first, "ls-remote", "origin", "refs/heads/"+a.issueOf(t, id).Branch)[:40])

	// CI fails (no ok.txt): the controller steps the issue back, and the
	// message reaches the agent's pane on node a. The leader is killed
	// meanwhile; whichever controller leads carries on.
	kill(leader)
	iss := ctl.awaitIssue(t, id, "stepped back once", steppedBack(1))
	require.Greater(t, iss.PRNumber, 0, "the PR was opened from what node a pushed")
	require.Eventually(t, func() bool { return strings.Contains(a.received(id), "CI failed") }, settleWithin, lookEvery, "the step back's message reached node a's pane")

	gittest.Commit(t, work, "ok.txt", "ok\n", "make CI pass")
	said = a.agentNext(t, id)
	require.Contains(t, said, "exit=0", said)
	ctl.awaitIssue(t, id, "at implementation_review", atStage("implementation_review"))
	res := ctl.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	ctl.awaitIssue(t, id, "accepted", atStage("accepted"))
	ctl.awaitIssue(t, id, "merged", func(iss *issues.Issue) bool { return iss.EntryPending == nil })
	merged := gittest.Run(t, origin, "ls-tree", "--name-only", "main")
	assert.Contains(t, merged, "checkout.txt", "origin's main holds the agent's work")
	assert.Contains(t, merged, "ok.txt")

	assert.Equal(t, 1, strings.Count(a.received(id), "was stepped back pr_ready → implement.feedback"), "the step back's message typed once:\n%s", a.received(id))
	assert.Equal(t, 1, moves(ptr(ctl.issueOf(t, id)), stages.MoveStepBack), "one step back")
	assert.Equal(t, []string{itoa(id)}, a.starts(), "one agent started")
	res = ctl.run(t, humanEnv, "verify")
	assert.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	_ = standby
}

func ptr[T any](v T) *T { return &v }
