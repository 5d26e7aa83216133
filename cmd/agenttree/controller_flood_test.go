package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/controller/api/apitest"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/statedir"
)

// An agent of another OS user floods the controller's socket with 20,000
// slow connections (a request's headers, then one byte of its body), the
// attack that once used up the controller's file descriptors. The
// controller holds that user to its cap and closes the rest at once: a
// request of another uid (root's) is answered, the controller's passes go
// on (it opens the PR, runs CI and steps the issue back), its open
// descriptors stay under the cap, and it logs the user's refusals in one
// line, not one per connection.
func TestASlowLorisFloodSlowsOnlyItsUser(t *testing.T) {
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	agent := newOtherAgent(t, r)
	layout := statedir.Layout{Root: filepath.Join(r.dir, "_agenttree")}
	tok := r.run(t, humanEnv, "token", itoa(id), "--role", "developer")
	require.Equal(t, exitOK, tok.code, tok.stderr)
	token := strings.TrimSpace(tok.stdout)

	ctl := r.startController(t)
	require.Eventually(t, func() bool {
		conn, err := api.Dial(t.Context(), layout.Socket())
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, settleWithin, lookEvery, "the controller listens")
	// The controller inherits this process's open file limit, so its
	// limits are these.
	limits := api.DefaultLimits()
	fdDir := "/proc/" + strconv.Itoa(ctl.Process.Pid) + "/fd"
	fds := func() int {
		entries, _ := os.ReadDir(fdDir)
		return len(entries)
	}
	// The least count over a moment: the probe's connection above, and
	// any file the controller has open for an instant (a tick's read),
	// must not be counted as the controller's own.
	baseline := fds()
	for range 30 {
		time.Sleep(10 * time.Millisecond)
		baseline = min(baseline, fds())
	}
	var most atomic.Int64
	stopSampling, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			most.Store(max(most.Load(), int64(fds())))
			select {
			case <-stopSampling:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()

	const conns = 20_000
	flood := apitest.Start(t, agent.user.Command(ostest.Executable(t)), apitest.Flood{
		Socket: layout.Socket(), Token: token, Conns: conns, Refill: 200, For: 2 * settleWithin})
	require.Eventually(t, func() bool { return fds() >= baseline+limits.PerPeer }, settleWithin, lookEvery,
		"the flood holds all its user may (%d connections)", limits.PerPeer)
	require.Eventually(t, func() bool { return flood.Progress().Opened >= conns }, settleWithin, lookEvery,
		"the flood opens its %d connections", conns)

	// Its connections over the cap were closed; it opens new ones as the
	// controller lets connections go: it is still held.
	start := time.Now()
	out, err := api.NewClient(layout.Socket(), token).Do(t.Context(), api.RouteNext, api.NextRequest{RequestID: api.RequestID()})
	require.NoError(t, err, "root's request is answered during the flood")
	assert.Contains(t, out.Text, "implement.feedback → pr_ready")
	took := time.Since(start)
	t.Logf("root's next took %s during the flood", took)
	assert.Less(t, took, 10*time.Second, "in its usual time (a fraction of a second), not after retries")
	r.waitFor(t, id, "stepped back by the controller's pass (CI fails)", steppedBack(1))

	p := flood.Stop(t)
	close(stopSampling)
	<-sampled
	t.Logf("flood: %+v; the controller's descriptors: %d before it, %d at most", p, baseline, most.Load())
	assert.GreaterOrEqual(t, p.Closed, conns-limits.PerPeer, "what is over the cap is closed at once")
	// Over the flood's connections the controller opens what its pass
	// needs (git, the CI runner's pipes) and root's connection.
	assert.LessOrEqual(t, int(most.Load()), baseline+limits.PerPeer+64, "the controller's descriptors stay under the cap")
	require.Eventually(t, func() bool { return fds() < baseline+limits.PerPeer/2 }, settleWithin, lookEvery,
		"the flood's connections are given back when it ends")

	stopController(t, ctl)
	logged, err := os.ReadFile(r.log.Name())
	require.NoError(t, err)
	lines := 0
	for line := range strings.Lines(string(logged)) {
		if strings.Contains(line, "at its cap") {
			lines++
			assert.Contains(t, line, "uid="+strconv.Itoa(agent.user.UID), "the line names the user")
		}
	}
	assert.Equal(t, 1, lines, "the user's refusals are logged once a minute at most")
	assert.Less(t, strings.Count(string(logged), "\n"), 200, "no line per connection:\n%s", logged)
}
