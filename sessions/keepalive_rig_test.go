package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/stages"
)

// keptAgent is the agent of the keep-alive tests: it notes how it was
// started ("NAME MODE" in runs-ISSUE beside it), then behaves as its
// third argument says: crash, auth (refused credentials), or live (waits
// for input, echoing it). crash and auth wait a second before their last
// line, so that on a loaded machine the first message typed into the pane
// (which its terminal echoes, as cat's does) comes before the line, not
// after it: the escalation quotes the last line, and the classification
// reads the last lines only (sessions.Classify), which a long message
// echoed after them would push out.
const keptAgent = `#!/bin/sh
echo "$1 $2" >> "$(dirname "$0")/runs-$AGENTTREE_ISSUE"
echo "PWD=$(pwd -P)" > "$(dirname "$0")/pwd-$AGENTTREE_ISSUE"
case "$3" in
crash) sleep 1; echo "panic: something broke"; exit 1 ;;
auth) sleep 1; echo "Error: Invalid API key. Please run /login"; exit 1 ;;
quiet) exec sleep 60 ;;
esac
exec cat
`

const keepConfig = `project: shop
tmux: {socket: %[1]q}
agents:
  first:  {command: "%[2]s first start %[3]s", resume_command: "%[2]s first resume %[3]s"}
  second: {command: "%[2]s second start %[3]s"}
  checker: {command: "%[2]s checker start live"}
roles:
  developer: {agents: [first, second], max_restarts: 1, stall_after_s: %[4]d}
  reviewer: {agents: [checker], auto_start: true}
stages:
  - name: backlog
    parking_lot: true
  - name: work
  - name: review
    role: reviewer
  - name: accepted
    terminal: completion
`

// keepRig is a rig whose agents behave as mode says, with a controller
// over its state that the test ticks.
type keepRig struct {
	*sessionstest.Rig
	ctl *controller.Controller
}

func newKeepRig(t *testing.T, mode string, stallAfter int) *keepRig {
	t.Helper()
	r := sessionstest.NewRigWith(t, keptAgent, func(sock, agent string) string {
		return fmt.Sprintf(keepConfig, sock, agent, mode, stallAfter)
	})
	ctl := &controller.Controller{Load: func() (*engine.Engine, error) { return r.E, nil }, Tmux: r.Tmux, Interval: 100 * time.Millisecond}
	return &keepRig{Rig: r, ctl: ctl}
}

// tickUntil ticks the controller until cond holds.
func (r *keepRig) tickUntil(what string, cond func() bool) {
	r.T.Helper()
	require.Eventually(r.T, func() bool {
		_, err := r.ctl.Tick(context.Background())
		require.NoError(r.T, err)
		return cond()
	}, 30*time.Second, 100*time.Millisecond, what)
}

func (r *keepRig) issue(id int) *issues.Issue {
	r.T.Helper()
	iss, err := r.E.Store.Get(id)
	require.NoError(r.T, err)
	return iss
}

func (r *keepRig) escalated(id int) bool { return r.issue(id).Escalated != nil }

// runs are the starts of issue id's agents, in order.
func (r *keepRig) runs(id int) []string {
	data, _ := os.ReadFile(filepath.Join(r.Bin, fmt.Sprintf("runs-%d", id)))
	return strings.Fields(strings.ReplaceAll(string(data), " ", "/"))
}

// messages are the kinds of the messages to issue id's agent.
func (r *keepRig) messages(id int) []outbox.Message {
	r.T.Helper()
	all, err := r.E.Outbox(id).Recent(0)
	require.NoError(r.T, err)
	return all
}

func kinds(msgs []outbox.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Kind
	}
	return out
}

func TestKeepAliveRestartsThenFallsBackThenEscalates(t *testing.T) {
	r := newKeepRig(t, "crash", 0)
	iss := r.Create("Flaky", "work")
	_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)

	r.tickUntil("the issue escalated", func() bool { return r.escalated(iss.ID) })
	// first, its restart with its resume command, then second (no
	// resume_command: its command), twice.
	assert.Equal(t, []string{"first/start", "first/resume", "second/start", "second/start"}, r.runs(iss.ID))
	esc := r.issue(iss.ID).Escalated
	assert.Equal(t, issues.EscalatedAgent, esc.Kind)
	assert.Contains(t, esc.Reason, "the developer agent second of issue 1 exited")
	assert.Contains(t, esc.Reason, "panic: something broke")
	assert.Contains(t, esc.Reason, "`agenttree start 1 --restart`")

	rec, err := r.M.Record(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "second", rec.Agent)
	assert.Equal(t, 1, rec.Fallbacks)
	assert.Equal(t, sessions.ExitOther, rec.LastExit)
	// Each start had one first message; each restart's says why, then
	// where the agent is.
	var firsts []string
	for _, m := range r.messages(iss.ID) {
		if m.Kind == "start" {
			firsts = append(firsts, m.Text)
		}
	}
	require.Len(t, firsts, 4, "the start and three restarts, each its own message")
	for _, text := range firsts[1:] {
		assert.True(t, strings.HasPrefix(text, "You were restarted: the developer agent"), text)
		assert.Contains(t, text, "You are the developer agent of issue 1")
	}

	// Escalated, it is left alone.
	for range 3 {
		_, err := r.ctl.Tick(context.Background())
		require.NoError(t, err)
	}
	assert.Len(t, r.runs(iss.ID), 4)
}

func TestKeepAliveEscalatesAnAuthenticationFailureAtOnce(t *testing.T) {
	r := newKeepRig(t, "auth", 0)
	iss := r.Create("Locked out", "work")
	_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)

	r.tickUntil("the issue escalated", func() bool { return r.escalated(iss.ID) })
	assert.Equal(t, []string{"first/start"}, r.runs(iss.ID), "never retried")
	reason := r.issue(iss.ID).Escalated.Reason
	assert.Contains(t, reason, "could not authenticate")
	assert.Contains(t, reason, "Invalid API key")
	assert.Contains(t, reason, "fix them, then `agenttree start 1 --restart` and `agenttree resume 1 --reason TEXT`")
}

func TestKeepAliveNudgesAStalledAgentThenEscalates(t *testing.T) {
	r := newKeepRig(t, "quiet", 1)
	iss := r.Create("Stuck", "work")
	_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)

	r.tickUntil("the agent nudged", func() bool { return hasKind(r.messages(iss.ID), "nudge") })
	assert.False(t, r.escalated(iss.ID), "a nudge first")
	r.tickUntil("the issue escalated", func() bool { return r.escalated(iss.ID) })
	assert.Contains(t, r.issue(iss.ID).Escalated.Reason, "even after a nudge")
	assert.Equal(t, 1, count(r.messages(iss.ID), "nudge"), "nudged once")
	assert.Equal(t, []string{"first/start"}, r.runs(iss.ID), "a stalled agent is not restarted")
}

func hasKind(msgs []outbox.Message, kind string) bool { return count(msgs, kind) > 0 }

func count(msgs []outbox.Message, kind string) int {
	n := 0
	for _, m := range msgs {
		if m.Kind == kind {
			n++
		}
	}
	return n
}

func TestKeepAliveRecreatesSessionsAfterAReboot(t *testing.T) {
	r := newKeepRig(t, "live", 0)
	iss := r.Create("Survive", "work")
	res, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)
	pwd := filepath.Join(r.Bin, "pwd-1")
	require.Eventually(t, func() bool { return strings.Contains(readFile(pwd), res.Session.Worktree) }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, os.Remove(pwd))

	require.NoError(t, exec.Command("tmux", "-S", r.Tmux.Socket, "kill-server").Run())
	r.tickUntil("the session recreated", func() bool {
		live, err := r.Tmux.HasSession(context.Background(), res.Session.Session)
		return err == nil && live
	})
	require.Eventually(t, func() bool { return strings.Contains(readFile(pwd), res.Session.Worktree) }, 10*time.Second, 20*time.Millisecond,
		"the agent runs in the same worktree")
	assert.Equal(t, []string{"first/start", "first/resume"}, r.runs(iss.ID))
	rec, err := r.M.Record(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, res.Session.Worktree, rec.Worktree)
	assert.Equal(t, sessions.ExitGone, rec.LastExit)
	msgs := r.messages(iss.ID)
	require.Equal(t, []string{"start", "start"}, kinds(msgs), "one message for each start")
	assert.True(t, strings.HasPrefix(msgs[1].Text, "You were restarted: the developer agent first of issue 1 is gone"), msgs[1].Text)
}

func TestKeepAliveRespectsStopAndFinishedIssues(t *testing.T) {
	r := newKeepRig(t, "crash", 0)
	ctx := context.Background()
	stopped := r.Create("Stopped", "work")
	_, err := r.M.Start(ctx, stopped.ID, sessions.Options{})
	require.NoError(t, err)
	// Stopped once it ran: a stop before its first line is not what is tried.
	require.Eventually(t, func() bool { return len(r.runs(stopped.ID)) == 1 }, 10*time.Second, 20*time.Millisecond)
	_, err = r.M.Stop(ctx, stopped.ID)
	require.NoError(t, err)
	done := r.Create("Done", "work")
	_, err = r.M.Start(ctx, done.ID, sessions.Options{})
	require.NoError(t, err)
	_, err = r.E.Settle(ctx, done.ID, stages.TerminalCompletion, "merged by hand")
	require.NoError(t, err)

	// The finished issue's agent crashes; nothing starts either again.
	require.Eventually(t, func() bool {
		list, err := r.M.List(ctx)
		return err == nil && len(list) == 2 && list[1].Exited
	}, 10*time.Second, 20*time.Millisecond)
	for range 5 {
		_, err := r.ctl.Tick(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"first/start"}, r.runs(stopped.ID))
	assert.Equal(t, []string{"first/start"}, r.runs(done.ID))
	rec, err := r.M.Record(stopped.ID)
	require.NoError(t, err)
	assert.False(t, rec.Stopped.IsZero())
	live, err := r.Tmux.HasSession(ctx, rec.Session)
	require.NoError(t, err)
	assert.False(t, live)
	assert.False(t, r.escalated(stopped.ID))
	assert.False(t, r.escalated(done.ID))
}

func TestAutoStartStartsTheReviewer(t *testing.T) {
	r := newKeepRig(t, "live", 0)
	iss := r.Create("Review me", "review")
	r.tickUntil("the reviewer started", func() bool {
		rec, err := r.M.Record(iss.ID)
		return err == nil && rec.Role == "reviewer"
	})
	rec, err := r.M.Record(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "checker", rec.Agent)
	assert.Equal(t, "shop-reviewer-1", rec.Session)
	live, err := r.Tmux.HasSession(context.Background(), rec.Session)
	require.NoError(t, err)
	assert.True(t, live)
	// A developer's issue gets no session on its own (no auto_start).
	dev := r.Create("Developer's", "work")
	_, err = r.ctl.Tick(context.Background())
	require.NoError(t, err)
	_, err = r.M.Record(dev.ID)
	assert.ErrorIs(t, err, sessions.ErrNoSession)
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// A controller whose term ended after its tick began starts no agent:
// the keeper asks the fence before each issue's agent.
func TestAControllerWhoseTermEndedStartsNoAgent(t *testing.T) {
	r := newKeepRig(t, "live", 0)
	iss := r.Create("Review me", "review")
	lost := errors.New("this controller's term ended")
	var asked atomic.Int64
	r.ctl.Fence = func(context.Context) error {
		if asked.Add(1) == 1 {
			return nil // the tick's own start: the term ends after it
		}
		return lost
	}
	_, err := r.ctl.Tick(context.Background())
	require.NoError(t, err)
	require.Greater(t, asked.Load(), int64(1), "the keeper asked the fence")
	_, err = r.M.Record(iss.ID)
	require.ErrorIs(t, err, sessions.ErrNoSession, "no reviewer started by a controller whose term ended")

	r.ctl.Fence = nil
	r.tickUntil("the reviewer started by the controller that acts", func() bool {
		rec, err := r.M.Record(iss.ID)
		return err == nil && rec.Role == "reviewer"
	})
}
