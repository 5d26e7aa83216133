package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/stages"
)

// markerRE matches the marker the controller types at the start of every
// message (outbox.Marker).
var markerRE = regexp.MustCompile(`\[agenttree [0-9a-f]{8}\]`)

// TestControllerSurvivesSIGKILL runs the reference path while a
// controller is SIGKILLed at random moments and started again, many
// times: every pass is cut short somewhere, and all the controller knows
// is on disk. At the end: one PR, the step back told to the agent once
// and whole, every move made once.
func TestControllerSurvivesSIGKILL(t *testing.T) {
	const kills = 30
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	received := r.tmux.startAgent(t, agentSession(id))
	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	k := startKiller(t, r, rand.New(rand.NewPCG(seed, seed)))

	// Each step waits for its share of the kills too, so they fall all
	// along the flow.
	r.checkoutAndCommit(t, id)
	r.agentNext(t, id)
	r.waitFor(t, id, "stepped back once", steppedBack(1))
	msg := r.awaitStepBackSent(t, id)
	k.await(t, kills/3)
	r.fixCI(t, id)
	r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
	k.await(t, 2*kills/3)
	r.approve(t, id)
	k.await(t, kills)
	k.stop(t)

	// One more pass with nobody killing it: whatever a kill left half
	// done is finished now, or never will be.
	res := r.runProcess(t, processEnv(), "controller", "--once")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)

	iss := r.issue(t, id)
	assert.Equal(t, "accepted", iss.Stage)
	assert.Equal(t, 1, r.prs(t), "one PR opened, whatever the kills")
	assert.Equal(t, 1, moves(&iss, stages.MoveStepBack), "history %+v", iss.History)
	assert.Equal(t, 1, countMoves(&iss, "pr_ready", "implementation_review"), "history %+v", iss.History)

	agent := r.agentMessages(t, id)
	require.Len(t, agent, 1, "one message for the agent: %+v", agent)
	assert.Equal(t, outbox.Sent, agent[0].State)
	assert.Equal(t, msg.ID, agent[0].ID)
	pending, err := r.outbox(id).Pending()
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing left undelivered")

	got := awaitReceived(t, received, typed(msg))
	assert.Equal(t, []string{outbox.Marker(msg)}, markerRE.FindAllString(got, -1), "the pane received one message, once: %q", got)
	assert.Equal(t, 1, strings.Count(got, msg.Text), "the message arrived whole, once: %q", got)
}

// TestControllerKilledBetweenPasteAndEnter kills the controller in the
// one moment of a delivery where the message is in the agent's pane but
// not submitted: after the paste, before Enter. The controller started
// next must still get the message to the agent, whole and once.
func TestControllerKilledBetweenPasteAndEnter(t *testing.T) {
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	received := r.tmux.startAgent(t, agentSession(id))
	r.checkoutAndCommit(t, id)
	first := r.startController(t)
	r.agentNext(t, id)

	// The pane echoes the paste at once; Enter follows at least 150 ms
	// later.
	require.Eventually(t, func() bool {
		pane, err := r.tmux.captured(agentSession(id))
		return err == nil && markerRE.MatchString(pane)
	}, settleWithin, 5*time.Millisecond, "the message is pasted into the agent's pane")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	before, err := os.ReadFile(received)
	require.NoError(t, err)
	t.Logf("the pane's program had read %q when the controller was killed", before)

	second := r.startController(t)
	msg := r.awaitStepBackSent(t, id)
	got := awaitReceived(t, received, typed(msg))
	assert.Equal(t, 1, strings.Count(got, outbox.Marker(msg)), "delivered once: %q", got)
	assert.Equal(t, 1, strings.Count(got, msg.Text), "the message arrived whole, once: %q", got)
	stopController(t, second)
}

// countMoves counts the history entries from → to.
func countMoves(iss *issues.Issue, from, to string) int {
	n := 0
	for _, h := range iss.History {
		if h.From == from && h.To == to {
			n++
		}
	}
	return n
}

// killer keeps a controller running, and SIGKILLs it at random moments
// (up to life after it started), starting a new one each time.
type killer struct {
	r    *rig
	rng  *rand.Rand
	life time.Duration
	// progressed, when set, reports whether the controllers made progress
	// since it was last asked: while they make none, the next one may
	// live twice as long (up to 16 lives), so that a pass that has come to
	// take longer than the life measured is not cut short for ever.
	progressed func() bool
	// longest is the longest life a controller was given.
	longest atomic.Int64
	kills   atomic.Int64
	quit    chan struct{}
	done    chan struct{}

	mu sync.Mutex
	// early are the controllers that ended before they were killed, and
	// how; a controller never ends by itself.
	early []string
}

// maxLife bounds how long a controller lives before it is killed: long
// enough for a pass to finish now and then, short enough to cut most of
// them.
const maxLife = 800 * time.Millisecond

func startKiller(t *testing.T, r *rig, rng *rand.Rand) *killer {
	t.Helper()
	return startKillerWithin(t, r, rng, maxLife, nil)
}

// startKillerWithin is startKiller with controllers that live up to life,
// longer while they make no progress (killer.progressed).
func startKillerWithin(t *testing.T, r *rig, rng *rand.Rand, life time.Duration, progressed func() bool) *killer {
	t.Helper()
	k := &killer{r: r, rng: rng, life: life, progressed: progressed, quit: make(chan struct{}), done: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() { k.halt() })
	return k
}

func (k *killer) loop() {
	defer close(k.done)
	limit := k.life
	for {
		cmd := k.r.controllerCmd()
		if err := cmd.Start(); err != nil {
			k.noteEarly(fmt.Sprintf("start: %v", err))
			return
		}
		if int64(limit) > k.longest.Load() {
			k.longest.Store(int64(limit))
		}
		life := time.NewTimer(time.Duration(k.rng.Int64N(int64(limit))))
		quit := false
		select {
		case <-k.quit:
			quit = true
		case <-life.C:
		}
		life.Stop()
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if cmd.ProcessState.Exited() {
			k.noteEarly(fmt.Sprintf("pid %d exited with status %d", cmd.Process.Pid, cmd.ProcessState.ExitCode()))
		}
		k.kills.Add(1)
		if quit {
			return
		}
		switch {
		case k.progressed == nil:
		case k.progressed():
			limit = k.life
		case limit < 16*k.life:
			limit *= 2
		}
	}
}

func (k *killer) noteEarly(what string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.early = append(k.early, what)
}

// await waits until the killer has killed n controllers.
func (k *killer) await(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return k.kills.Load() >= int64(n) }, settleWithin, lookEvery, "%d controllers killed", n)
}

// stop kills the last controller and checks that none ended by itself.
func (k *killer) stop(t *testing.T) {
	t.Helper()
	k.halt()
	k.mu.Lock()
	defer k.mu.Unlock()
	assert.Empty(t, k.early, "controllers that ended before they were killed")
	t.Logf("%d controllers killed", k.kills.Load())
}

func (k *killer) halt() {
	select {
	case <-k.quit:
	default:
		close(k.quit)
	}
	<-k.done
}
