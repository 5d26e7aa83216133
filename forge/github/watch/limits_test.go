package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/internal/proc"
)

// A forwarder is a process group: gh and the extension it runs. Stopping
// the watch asks the group to stop (gh removes its hook then), kills what
// does not within the grace, and leaves nothing running.
func TestForwarderStopsItsWholeGroup(t *testing.T) {
	if _, err := proc.InGroup(os.Getpid()); err != nil {
		t.Skip("no /proc to list a process group from:", err)
	}
	srv := githubtest.New(t)
	dir := t.TempDir()
	termed := filepath.Join(dir, "termed")
	// The stand-in for gh: it notes SIGTERM, and runs a child that ignores
	// it and holds gh's output open, as an extension busy on its websocket.
	script := `trap 'echo term > "$0"; exit 0' TERM; (trap '' TERM; sleep 300) & wait; wait`
	w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{"sh", "-c", script, termed}, StateDir: dir, CheckEvery: time.Hour})
	stop := startWatch(t, w, &changes{})

	var pgid int
	var members []proc.Info
	require.Eventually(t, func() bool {
		w.mu.Lock()
		pgid = w.fwdPID
		w.mu.Unlock()
		if pgid == 0 {
			return false
		}
		members, _ = proc.InGroup(pgid)
		return len(members) >= 2
	}, 10*time.Second, 20*time.Millisecond, "the forwarder and its child run in a group of their own")

	began := time.Now()
	stop()
	took := time.Since(began)
	// A kill is delivered when the killed process next runs: on a busy
	// machine, a moment after the stop returns.
	for _, m := range members {
		assert.Eventually(t, func() bool { return !proc.Alive(m.PID) }, 5*time.Second, 10*time.Millisecond,
			"process %d (%s) of the forwarder's group outlived the watch", m.PID, m.Comm)
	}
	assert.Eventually(t, func() bool { left, _ := proc.InGroup(pgid); return len(left) == 0 }, 5*time.Second, 20*time.Millisecond,
		"no process of the forwarder's group is left")
	assert.FileExists(t, termed, "the forwarder was asked to stop (SIGTERM) first")
	assert.Less(t, took, 4500*time.Millisecond, "the stop waits the grace, not the forwarder's WaitDelay")
}

// Stopping during a network outage ends within the cleanup's deadline:
// removing the forwarder's hook does not wait on GitHub for ever.
func TestForwardModeStopsDuringAnOutage(t *testing.T) {
	srv := githubtest.New(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
	w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{exe}, StateDir: t.TempDir(), CheckEvery: time.Hour})
	w.limits.cleanup = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Watch(ctx, func(forge.Change) {}) }()
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 20*time.Second, 20*time.Millisecond)

	// The forwarder is killed, so the watch itself removes its hook, and
	// GitHub does not answer.
	w.mu.Lock()
	pid := w.fwdPID
	w.mu.Unlock()
	srv.SetLatency(time.Hour)
	t.Cleanup(func() { srv.SetLatency(0) })
	p, err := os.FindProcess(pid)
	require.NoError(t, err)
	cancel()
	_ = p.Kill()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("the watch did not end within 15 s of its stop, GitHub unreachable")
	}
}

// makeCLIHook makes a "cli" hook delivering to url, as another
// `gh webhook forward` would.
func makeCLIHook(t *testing.T, srv *githubtest.Server, url string) int64 {
	body, _ := json.Marshal(map[string]any{"name": "cli", "active": true, "events": []string{"*"},
		"config": map[string]any{"url": url, "content_type": "json"}})
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/repos/octo/app/hooks", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "token "+srv.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var h ghapi.Hook
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return h.ID
}

// Another forwarder's hook, delivering, is left alone, and the watch
// says who holds the repository and what to do.
func TestForwardModeLeavesAnotherForwardersHook(t *testing.T) {
	srv := githubtest.New(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(other.Close)
	theirs := makeCLIHook(t, srv, other.URL)
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
	w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{exe}, StateDir: t.TempDir(), CheckEvery: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = w.Watch(ctx, func(forge.Change) {})
	require.ErrorIs(t, err, errOtherForwarder)
	assert.Contains(t, err.Error(), "stop the other `gh webhook forward`")
	assert.Equal(t, []int64{theirs}, srv.HookIDs(), "the other forwarder's hook is kept")
}

// A stale forwarder hook this watch did not make, whose deliveries fail,
// is still removed.
func TestForwardModeRemovesAStaleHookItDidNotMake(t *testing.T) {
	srv := githubtest.New(t)
	stale := makeCLIHook(t, srv, "http://"+freePort(t)+"/")
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
	w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{exe}, StateDir: t.TempDir(), CheckEvery: time.Hour})
	startWatch(t, w, &changes{})
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 30*time.Second, 20*time.Millisecond, "forwarding")
	ids := srv.HookIDs()
	require.Len(t, ids, 1)
	assert.NotEqual(t, stale, ids[0])
}

// Deliveries that fail, or that something else than the receiver answers,
// while the receiver runs make the watch unhealthy until one arrives
// again, and what they told of is read from GitHub.
func TestWebhookModeUnhealthyWhileDeliveriesFail(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(elsewhere.Close)
	for _, tc := range []struct{ name, pointsAt string }{
		{name: "nothing answers (a proxy gone, a URL mistyped)", pointsAt: "http://" + freePort(t) + "/"},
		{name: "something else answers 2xx (a proxy sending elsewhere)", pointsAt: elsewhere.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			srv.AddPR(githubtest.PR{HeadSHA: sha1})
			addr := freePort(t)
			ev := Events{Mode: ModeWebhook, URL: "http://" + addr + "/", Listen: addr, StateDir: t.TempDir(), CheckEvery: 200 * time.Millisecond}
			w := openWatching(t, srv, ev)
			c := &changes{}
			startWatch(t, w, c)
			require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond)
			hook := srv.HookIDs()[0]
			secret, err := w.secret()
			require.NoError(t, err)

			require.NoError(t, w.api.UpdateHook(context.Background(), hook, ghapi.HookConfig{URL: tc.pointsAt, Secret: string(secret), Events: []string{"status"}}))
			time.Sleep(1100 * time.Millisecond) // past the receiver's first second
			srv.AddStatus(sha1, "ci/a", "failure", "")
			require.Eventually(t, func() bool { made, _ := srv.Deliveries(); return made >= 2 }, 10*time.Second, 20*time.Millisecond)
			require.Eventually(t, func() bool { return w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond, "deliveries not arriving: not healthy")
			assert.True(t, c.has(forge.Change{SHA: sha1, What: "status"}), "the delivery is read from the deliveries API")

			require.NoError(t, w.api.UpdateHook(context.Background(), hook, ghapi.HookConfig{URL: ev.URL, Secret: string(secret), Events: []string{"status"}}))
			srv.AddStatus(sha1, "ci/b", "success", "")
			require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond, "healthy again once a delivery arrives")
		})
	}
}

// More failed deliveries than one page lists: the gap stays open.
func TestWebhookModeGapLongerThanAPage(t *testing.T) {
	srv := githubtest.New(t)
	addr := freePort(t)
	ev := Events{Mode: ModeWebhook, URL: "http://" + addr + "/", Listen: addr, StateDir: t.TempDir(), CheckEvery: time.Hour}
	w := openWatching(t, srv, ev)
	stop := startWatch(t, w, &changes{})
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond)
	stop()
	for i := range ghapi.DeliveriesPage + 5 {
		srv.AddStatus(sha1, "ci/"+strconv.Itoa(i), "failure", "")
	}
	require.Eventually(t, func() bool { made, ok := srv.Deliveries(); return made-ok >= ghapi.DeliveriesPage+5 }, 30*time.Second, 20*time.Millisecond)

	w2 := openWatching(t, srv, ev)
	startWatch(t, w2, &changes{})
	require.Eventually(t, func() bool { return w2.WatchStats().Stats.Accepted > 0 }, 10*time.Second, 20*time.Millisecond, "the restart's ping arrives")
	time.Sleep(500 * time.Millisecond)
	assert.True(t, w2.Healthy().IsZero(), "a gap the deliveries listed do not cover is not filled")
	// The page holds the restart's ping too, when it came first.
	assert.GreaterOrEqual(t, w2.WatchStats().Recovered, int64(ghapi.DeliveriesPage-1))
}

// A delivery that fails while a look reads the deliveries is found by
// the next look.
func TestWebhookModeFindsAFailureDuringALook(t *testing.T) {
	srv := githubtest.New(t)
	addr := freePort(t)
	state := t.TempDir()
	ev := Events{Mode: ModeWebhook, URL: "http://" + addr + "/", Listen: addr, StateDir: state, CheckEvery: time.Hour}
	w := openWatching(t, srv, ev)
	stop := startWatch(t, w, &changes{})
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond)
	stop()
	srv.AddStatus(sha1, "ci/first", "failure", "")
	require.Eventually(t, func() bool { made, ok := srv.Deliveries(); return made > ok }, 10*time.Second, 20*time.Millisecond)

	// While the restart recovers the first, a second fails, and a second
	// passes before the look ends.
	c := &changes{}
	var fired bool
	changed := func(ch forge.Change) {
		c.add(ch)
		if fired {
			return
		}
		fired = true
		made, _ := srv.Deliveries()
		srv.AddStatus(sha2, "ci/second", "failure", "")
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if m, _ := srv.Deliveries(); m > made {
				break
			}
		}
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	}
	w2 := openWatching(t, srv, Events{Mode: ModeWebhook, URL: "http://" + freePort(t) + "/", Listen: freePort(t), StateDir: state, CheckEvery: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w2.Watch(ctx, changed) }()
	require.Eventually(t, func() bool { return c.has(forge.Change{SHA: sha1, What: "status"}) }, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return w2.WatchStats().GapsFilled > 0 }, 20*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	w3 := openWatching(t, srv, ev)
	startWatch(t, w3, c)
	require.Eventually(t, func() bool { return w3.WatchStats().GapsFilled > 0 }, 20*time.Second, 20*time.Millisecond)
	assert.True(t, c.has(forge.Change{SHA: sha2, What: "status"}), "the delivery that failed during the look is recovered by the next: %v", c.got)
}

// The receiver cuts off a client that trickles its body, and leaves no
// connection open once the watch has ended.
func TestWebhookReceiverBoundsConnections(t *testing.T) {
	srv := githubtest.New(t)
	addr := freePort(t)
	ev := Events{Mode: ModeWebhook, URL: "http://" + addr + "/", Listen: addr, StateDir: t.TempDir(), CheckEvery: time.Hour}
	w := openWatching(t, srv, ev)
	w.limits.read = time.Second
	stop := startWatch(t, w, &changes{})
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 30*time.Second, 20*time.Millisecond)

	trickle := func() (net.Conn, chan error) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: ping\r\nContent-Length: 1000\r\n\r\n")
		require.NoError(t, err)
		closed := make(chan error, 1)
		go func() {
			for range 600 {
				if _, err := conn.Write([]byte("x")); err != nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		go func() { _, err := io.Copy(io.Discard, conn); closed <- err }()
		return conn, closed
	}
	_, closed := trickle()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("a client trickling its body was not cut off")
	}

	// A slow client whose request has not timed out when the watch stops.
	stop()
	w2 := openWatching(t, srv, ev)
	w2.limits.read, w2.limits.shutdown = time.Hour, 500*time.Millisecond
	stop2 := startWatch(t, w2, &changes{})
	require.Eventually(t, func() bool { return !w2.Healthy().IsZero() }, 30*time.Second, 20*time.Millisecond)
	_, closed = trickle()
	time.Sleep(300 * time.Millisecond)
	stop2()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("a connection stayed open after the watch ended")
	}
}
