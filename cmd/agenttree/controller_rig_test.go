package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/sessions/tmux/tmuxtest"
	"github.com/agenttree/agenttree/stages"
)

// Bounds of the waits for what the controller does in the background. A
// pass takes about a second (the pipelines poll CI every second); the
// bound is far above it, for a loaded machine, and is never reached when
// things work.
const (
	settleWithin = 30 * time.Second
	lookEvery    = 50 * time.Millisecond
	// arriveWithin bounds the wait for a message the outbox holds as sent
	// to be read by the pane's program: it was when the outbox said so,
	// or is a moment later.
	arriveWithin = 10 * time.Second
)

// rig is a repository on the local forge with a bare origin, whose config
// points the controller at a private tmux server; the controllers it
// starts log to one file, printed when the test fails.
type rig struct {
	*workspace
	tmux *tmuxServer
	// issues reads the issues as they change: waitFor watches them.
	issues *issues.Store
	log    *os.File
}

// newRig makes a rig for testdata/pipelines/PIPELINE.yaml. It skips the
// test when git or tmux is missing.
func newRig(t *testing.T, pipeline string) *rig {
	t.Helper()
	return newRigTmux(t, pipeline, "")
}

// newRigTmux is newRig with more keys under the config's `tmux:` (each
// line indented by two spaces).
func newRigTmux(t *testing.T, pipeline, tmuxKeys string) *rig {
	t.Helper()
	return newRigWith(t, pipeline, tmuxKeys, "")
}

// newRigWith is newRigTmux with more top-level keys at the config's end.
func newRigWith(t *testing.T, pipeline, tmuxKeys, more string) *rig {
	t.Helper()
	server := newTmuxServer(t)
	config := testpipeline.Read(t, pipeline) + fmt.Sprintf("tmux:\n  socket: %s\n", strconv.Quote(server.socket)) + tmuxKeys + more
	w := newForgeRepo(t, config)
	store, err := issues.Open(filepath.Join(w.dir, "_agenttree"))
	require.NoError(t, err)
	logPath := filepath.Join(t.TempDir(), "controller.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("controller log:\n%s", data)
		}
	})
	return &rig{workspace: w, tmux: server, issues: store, log: log}
}

// startIssue creates an issue at implement.feedback and does the agent's
// work on it: a commit on its branch, then `next`, which moves it to
// pr_ready, the controller's stage.
func (r *rig) startIssue(t *testing.T) int {
	t.Helper()
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	r.agentNext(t, id)
	return id
}

// checkoutAndCommit checks out issue id's branch and commits a change on
// it.
func (r *rig) checkoutAndCommit(t *testing.T, id int) {
	t.Helper()
	gittest.Run(t, r.dir, "checkout", "-q", "-b", r.issue(t, id).Branch)
	gittest.Commit(t, r.dir, "checkout.txt", "checkout\n", "checkout page")
}

// agentNext runs the agent's `next` on its branch: implement.feedback's
// gates pass and the issue goes to pr_ready for the controller.
func (r *rig) agentNext(t *testing.T, id int) {
	t.Helper()
	res := r.run(t, agentEnv, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "implement.feedback → pr_ready")
	assert.Equal(t, "pr_ready", r.issue(t, id).Stage)
}

// fixCI commits what the pipelines' CI (`test -f ok.txt`) wants and runs
// the agent's `next`.
func (r *rig) fixCI(t *testing.T, id int) {
	t.Helper()
	gittest.Commit(t, r.dir, "ok.txt", "ok\n", "make CI pass")
	r.agentNext(t, id)
}

// approve is a person's approval at implementation_review, which merges
// the PR on origin and accepts the issue.
func (r *rig) approve(t *testing.T, id int) {
	t.Helper()
	res := r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "merged PR #1")
	assert.Equal(t, "accepted", r.issue(t, id).Stage)
	merged := gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main")
	assert.Contains(t, merged, "checkout.txt")
	assert.Contains(t, merged, "ok.txt")
}

func (r *rig) bare() string { return filepath.Join(filepath.Dir(r.dir), "origin.git") }

// waitFor waits until issue id is what cond wants, and returns it.
func (r *rig) waitFor(t *testing.T, id int, what string, cond func(*issues.Issue) bool) *issues.Issue {
	t.Helper()
	var got *issues.Issue
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		iss, err := r.issues.Get(id)
		require.NoError(c, err)
		require.Truef(c, cond(iss), "issue %d is not %s yet: it is %s", id, what, describe(iss))
		got = iss
	}, settleWithin, lookEvery)
	return got
}

func describe(iss *issues.Issue) string {
	if iss == nil {
		return "unreadable"
	}
	return fmt.Sprintf("at %s, version %d, escalated %+v, entry pending %+v, history %+v", iss.Stage, iss.Version, iss.Escalated, iss.EntryPending, iss.History)
}

// atStage is a condition of waitFor.
func atStage(stage string) func(*issues.Issue) bool {
	return func(iss *issues.Issue) bool { return iss.Stage == stage }
}

// steppedBack is a condition of waitFor: the issue is back at
// implement.feedback after n step backs.
func steppedBack(n int) func(*issues.Issue) bool {
	return func(iss *issues.Issue) bool {
		return iss.Stage == "implement.feedback" && moves(iss, stages.MoveStepBack) == n
	}
}

// moves counts the history entries of kind.
func moves(iss *issues.Issue, kind stages.Move) int {
	n := 0
	for _, h := range iss.History {
		if h.Kind == kind {
			n++
		}
	}
	return n
}

// lastMove is the issue's latest history entry of kind.
func lastMove(t *testing.T, iss *issues.Issue, kind stages.Move) issues.HistoryEntry {
	t.Helper()
	for i := len(iss.History) - 1; i >= 0; i-- {
		if iss.History[i].Kind == kind {
			return iss.History[i]
		}
	}
	require.FailNowf(t, "no such move", "issue %d has no %s in its history: %+v", iss.ID, kind, iss.History)
	return issues.HistoryEntry{}
}

// outbox is issue id's queue of messages: in etcd when the rig's state
// is (newEtcdRig), as engine.Engine.Outbox finds it.
func (r *rig) outbox(id int) *outbox.Box {
	if k, ok := issues.As[outbox.Keeper](r.issues); ok {
		return outbox.At(k.Outbox(id))
	}
	return outbox.Open(filepath.Join(r.hostDir(id), "outbox"))
}

// agentMessages are the messages to the agent in issue id's outbox,
// queued and sent.
func (r *rig) agentMessages(t *testing.T, id int) []outbox.Message {
	t.Helper()
	all, err := r.outbox(id).Recent(0)
	require.NoError(t, err)
	var out []outbox.Message
	for _, m := range all {
		if m.To == outbox.ToAgent {
			out = append(out, m)
		}
	}
	return out
}

// prs counts the PR records on the local forge.
func (r *rig) prs(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(r.dir, "_agenttree", "host", "forge", "prs", "*.yaml"))
	require.NoError(t, err)
	return len(files)
}

// ciRuns counts the CI records on the local forge.
func (r *rig) ciRuns(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(r.dir, "_agenttree", "host", "forge", "checks", "*.yaml"))
	require.NoError(t, err)
	return len(files)
}

// logText is what the rig's controllers logged so far.
func (r *rig) logText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(r.log.Name())
	require.NoError(t, err)
	return string(data)
}

// startController starts `agenttree controller ARGS` as a process of its
// own, logging to the rig's log; one still running when the test ends is
// killed.
func (r *rig) startController(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := r.controllerCmd(args...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

func (r *rig) controllerCmd(args ...string) *exec.Cmd {
	cmd := r.command(processEnv(), append([]string{"controller", "--interval", "200ms"}, args...)...)
	// A file, not a pipe: a CI runner the controller leaves behind keeps
	// its output open, and Wait would wait for the runner.
	cmd.Stdout, cmd.Stderr = r.log, r.log
	return cmd
}

// stopController stops a controller the way a person does (SIGTERM): it
// finishes what it is doing and exits 0.
func stopController(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, wait(t, cmd), "a controller stopped by SIGTERM exits 0")
}

// runProcess runs the built agenttree as a process of its own and waits
// for it.
func (w *workspace) runProcess(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := w.command(env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	// A command that never ends fails the test instead of hanging it.
	deadline := time.AfterFunc(settleWithin, func() { _ = cmd.Process.Kill() })
	code := wait(t, cmd)
	if !deadline.Stop() {
		t.Errorf("agenttree %s did not end within %s and was killed", strings.Join(args, " "), settleWithin)
	}
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// tmuxServer is a private tmux server for one test.
type tmuxServer struct{ socket string }

// newTmuxServer starts a tmux server of the test's own
// (tmuxtest.Server).
func newTmuxServer(t *testing.T) *tmuxServer {
	t.Helper()
	return &tmuxServer{socket: tmuxtest.Server(t)}
}

func (s *tmuxServer) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.output(args...)
	require.NoError(t, err)
	return out
}

func (s *tmuxServer) output(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// agentSession is the session of issue id's developer under the default
// tmux.session template, {{project}}-{{role}}-{{issue_id}}.
func agentSession(id int) string { return fmt.Sprintf("shop-developer-%d", id) }

// startAgent starts session name with a pane standing in for the agent:
// it appends every line typed into it to the returned file (the pane
// itself echoes what is typed, so the pane shows each message twice, the
// file once).
func (s *tmuxServer) startAgent(t *testing.T, name string) (received string) {
	t.Helper()
	dir := t.TempDir()
	received = filepath.Join(dir, "received")
	s.run(t, "new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", dir, "sh", "-c", `exec cat >> "$0"`, received)
	return received
}

// capture is what session name's pane shows, its history included, with
// wrapped lines joined.
func (s *tmuxServer) capture(t *testing.T, name string) string {
	t.Helper()
	out, err := s.captured(name)
	require.NoError(t, err)
	return out
}

func (s *tmuxServer) captured(name string) (string, error) {
	return s.output("capture-pane", "-p", "-J", "-S", "-2000", "-t", name)
}

// awaitStepBackSent waits until issue id's outbox holds the step back's
// message to the agent as sent, and returns it.
func (r *rig) awaitStepBackSent(t *testing.T, id int) outbox.Message {
	t.Helper()
	var got outbox.Message
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		box, err := r.outbox(id).Recent(0)
		require.NoError(c, err)
		i := slices.IndexFunc(box, func(m outbox.Message) bool {
			return m.To == outbox.ToAgent && m.Kind == string(stages.MoveStepBack) && m.State == outbox.Sent
		})
		require.GreaterOrEqualf(c, i, 0, "issue %d: the step back's message to the agent is not sent; the outbox holds %+v", id, box)
		got = box[i]
	}, settleWithin, lookEvery)
	return got
}

// typed is the text the controller types for m: its marker, then the
// message.
func typed(m outbox.Message) string { return outbox.Marker(m) + " " + m.Text }

// awaitReceived waits until the agent's pane program has read want, whole,
// and returns all it read. Call it once the outbox holds the message as
// sent (awaitStepBackSent).
func awaitReceived(t *testing.T, file, want string) string {
	t.Helper()
	var got string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(file)
		require.NoError(c, err)
		require.Containsf(c, string(data), want, "the agent's pane program did not read the whole message")
		got = string(data)
	}, arriveWithin, lookEvery)
	return got
}
