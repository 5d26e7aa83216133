//go:build etcd && unix

package main

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/controller/leader"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

const etcdRigPrefix = "/agenttree/shop"

// newEtcdRig is the controller pipeline's rig with its issues' state in
// an embedded cluster of three members, read from there by waitFor.
func newEtcdRig(t *testing.T) (*rig, *etcdtest.Members, *clientv3.Client) {
	t.Helper()
	m := etcdtest.StartMembers(t, 3)
	state := "state:\n  backend: etcd\n  etcd:\n    endpoints: [" + strings.Join(m.Endpoints, ", ") + "]\n    prefix: " + etcdRigPrefix + "\n"
	r := newRigWith(t, "controller-merges", "", state)
	cli := m.Client(t)
	b := etcdstore.New(cli, etcdRigPrefix)
	t.Cleanup(func() { b.Close() })
	st, err := issues.OpenWith(filepath.Join(r.dir, "_agenttree"), b)
	require.NoError(t, err)
	r.issues = st
	return r, m, cli
}

// awaitLeader waits until one of cmds leads the election, and returns it.
func awaitLeader(t *testing.T, cli *clientv3.Client, cmds ...*exec.Cmd) *exec.Cmd {
	t.Helper()
	var got *exec.Cmd
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		who, err := leader.Leader(ctx, cli, etcdRigPrefix+"/leader")
		require.NoError(c, err)
		pid, _ := strconv.Atoi(who[strings.LastIndex(who, " ")+1:])
		for _, cmd := range cmds {
			if cmd.Process.Pid == pid {
				got = cmd
				return
			}
		}
		require.Failf(c, "not elected", "%q leads, none of the controllers waited for", who)
	}, 2*settleWithin, lookEvery)
	return got
}

// kill SIGKILLs a controller and reaps it.
func kill(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// Two controllers share the cluster: one is elected and acts, the other
// stands by. The one elected is SIGKILLed at a random moment while it
// opens the PR, runs CI, steps the issue back and types the reason into
// the agent's pane; the standby takes over within the lease, and the
// controller started again stands by. The new one elected is then frozen
// while CI runs a second time, longer than its lease: the standby takes
// over, and the old one, thawed, does nothing more. Then two members of
// three stop: no quorum, so the term ends and a person's command says the
// state cannot be read; the members come back and a controller is
// elected again. A person approves, and the controller merging is killed
// at a random moment of the merge. At the end: one PR, one step back, the
// message typed once and whole, the issue merged once, and every issue
// verifies.
func TestEtcdControllersElectOneWhichIsKilledAndReplaced(t *testing.T) {
	r, members, cli := newEtcdRig(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	a, b := r.startController(t), r.startController(t)
	first := awaitLeader(t, cli, a, b)
	standby := a
	if first == a {
		standby = b
	}

	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	received := r.tmux.startAgent(t, agentSession(id))
	iss, err := r.issues.Get(id)
	require.NoError(t, err)
	gittest.Run(t, r.dir, "checkout", "-q", "-b", iss.Branch)
	gittest.Commit(t, r.dir, "checkout.txt", "checkout\n", "checkout page")
	res := r.run(t, agentEnv, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	require.Contains(t, res.stdout, "implement.feedback → pr_ready")

	time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
	kill(first)
	killed := time.Now()
	second := awaitLeader(t, cli, standby)
	took := time.Since(killed)
	t.Logf("the standby was elected %s after the leader was killed", took.Round(10*time.Millisecond))
	assert.Less(t, took, leader.DefaultTTL+10*time.Second, "taken over within the lease (and a loaded machine's slack)")

	r.waitFor(t, id, "stepped back once", steppedBack(1))
	msg := r.awaitStepBackSent(t, id)
	awaitReceived(t, received, typed(msg))
	third := r.startController(t)

	gittest.Commit(t, r.dir, "ok.txt", "ok\n", "make CI pass")
	res = r.run(t, agentEnv, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
	require.Same(t, second, awaitLeader(t, cli, second, third), "the one started again stands by")
	// Frozen (SIGSTOP) longer than its lease, mid-pass: the standby is
	// elected; thawed, the old one finds its term over and does nothing,
	// its store writes fenced and its forge changes refused.
	require.NoError(t, second.Process.Signal(syscall.SIGSTOP))
	awaitLeader(t, cli, third)
	r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
	require.NoError(t, second.Process.Signal(syscall.SIGCONT))
	require.Eventually(t, func() bool { return strings.Contains(r.logText(t), "this controller's term ended") },
		2*settleWithin, lookEvery, "the thawed controller saw its term had ended")

	// No quorum: the term ends within the lease, and people are told the
	// state cannot be read.
	ended := strings.Count(r.logText(t), "this controller's term ended:")
	members.Stop(1)
	members.Stop(2)
	require.Eventually(t, func() bool { return strings.Count(r.logText(t), "this controller's term ended:") > ended },
		2*settleWithin, lookEvery, "the leader saw its term end without a quorum")
	res = r.run(t, humanEnv, "approve", itoa(id))
	assert.NotEqual(t, exitOK, res.code)
	assert.Contains(t, res.stderr, "etcdctl --endpoints="+strings.Join(members.Endpoints, ","))
	members.Restart(1)
	members.Restart(2)
	leading := awaitLeader(t, cli, second, third)

	// The person approves; the controller merges (accepted is its stage
	// in this pipeline), and is killed at a random moment of the merge:
	// the other merges, once.
	res = r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
	kill(leading)
	last := second
	if leading == second {
		last = third
	}
	awaitLeader(t, cli, last)
	r.waitFor(t, id, "merged", func(iss *issues.Issue) bool { return iss.Stage == "accepted" && iss.EntryPending == nil })
	stopController(t, last)
	got, err := r.issues.Get(id)
	require.NoError(t, err)
	assert.Equal(t, "accepted", got.Stage)
	assert.Equal(t, 1, r.prs(t), "one PR opened, whatever the kills")
	assert.Equal(t, 1, moves(got, stages.MoveStepBack), "history %+v", got.History)
	assert.Equal(t, 1, countMoves(got, "pr_ready", "implementation_review"), "history %+v", got.History)
	agent := r.agentMessages(t, id)
	require.Len(t, agent, 1, "one message for the agent: %+v", agent)
	assert.Equal(t, outbox.Sent, agent[0].State)
	text := awaitReceived(t, received, typed(msg))
	assert.Equal(t, []string{outbox.Marker(msg)}, markerRE.FindAllString(text, -1), "the pane received one message, once: %q", text)
	merged := gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main")
	assert.Contains(t, merged, "checkout.txt")
	merges := gittest.Run(t, r.bare(), "log", "--oneline", "main", "--", "checkout.txt")
	assert.Len(t, strings.Split(strings.TrimSpace(merges), "\n"), 1, "merged once: %s", merges)

	res = r.run(t, humanEnv, "verify")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "issue 1: ok")
	assert.Contains(t, res.stdout, "3 forge records: 3 consistent")
}

// A controller elected on another host holds no lock of this one: status
// says who leads, and migrate, which campaigns itself, is refused naming
// it.
func TestEtcdMigrateRefusedWhileAControllerLeadsElsewhere(t *testing.T) {
	w, c := etcdWorkspace(t, "/agenttree/led")
	w.create(t, "Add login page", "--stage", "implement.code")
	term, err := leader.Campaign(context.Background(), leader.Config{Client: c.Client(t), Prefix: "/agenttree/led/leader", Name: "other-host pid 7"}, nil)
	require.NoError(t, err)
	r := w.run(t, humanEnv, "status")
	require.Equal(t, exitOK, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "the controller elected over etcd: other-host pid 7")
	r = w.run(t, humanEnv, "migrate", "--to", "files")
	assert.Equal(t, exitWaiting, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "a controller leads "+w.config+" through etcd (other-host pid 7); stop it, then run `agenttree migrate --to files` again")
	assert.NoFileExists(t, filepath.Join(w.hostDir(1), "issue.yaml"), "nothing moved")

	require.NoError(t, term.Resign(context.Background()))
	r = w.run(t, humanEnv, "migrate", "--to", "files")
	require.Equal(t, exitOK, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
}

// `controller --once` over etcd is elected for its pass and resigns at
// once after it, so a standby is not kept waiting for its lease; while
// another leads it is refused, naming it.
func TestEtcdControllerOnce(t *testing.T) {
	w, c := etcdWorkspace(t, "/agenttree/once")
	cli := c.Client(t)
	r := w.runProcess(t, processEnv(), "controller", "--once")
	require.Equal(t, exitOK, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	who, err := leader.Leader(context.Background(), cli, "/agenttree/once/leader")
	require.NoError(t, err)
	assert.Empty(t, who, "resigned as it ended: no key left for its lease to hold")

	term, err := leader.Campaign(context.Background(), leader.Config{Client: cli, Prefix: "/agenttree/once/leader", Name: "other-host pid 7"}, nil)
	require.NoError(t, err)
	defer term.Resign(context.Background())
	r = w.runProcess(t, processEnv(), "controller", "--once")
	assert.Equal(t, exitUsage, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "another controller is running: a controller leads "+w.config+" through etcd (other-host pid 7)")
}
