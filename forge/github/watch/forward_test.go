package watch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/webhook"
)

// forwarderSecret is the running forwarder's secret as any local user
// reads it: off its command line in /proc, or, where there is none, from
// the watch.
func forwarderSecret(t *testing.T, w *Watching, pid int) []byte {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
		for _, arg := range strings.Split(string(b), "\x00") {
			if s, ok := strings.CutPrefix(arg, "--secret="); ok {
				return []byte(s)
			}
		}
		t.Fatalf("no --secret on the forwarder's command line %q", b)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Len(t, w.secrets, 1)
	return w.secrets[0]
}

// A local process that reads the forwarder's secret off its command line
// signs a delivery naming a person's own webhook: the watch is no
// healthier for it, and its stop removes the forwarder's hook, as GitHub
// lists it, never the person's.
func TestForwardModeRemovesOnlyTheHookGitHubListsForItsForwarder(t *testing.T) {
	srv := githubtest.New(t)
	srv.AddPR(githubtest.PR{HeadSHA: sha1})
	production := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(production.Close)
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
	// The forwarder relays nothing, so that the forged delivery is the
	// first signed one the receiver takes.
	stalled := filepath.Join(t.TempDir(), "stalled")
	require.NoError(t, os.WriteFile(stalled, nil, 0o600))
	addr := freePort(t)
	w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{exe, "--drop-while=" + stalled}, Listen: addr,
		StateDir: t.TempDir(), CheckEvery: time.Hour})
	persons, err := w.api.CreateHook(context.Background(), ghapi.HookConfig{URL: production.URL, Secret: "theirs", Events: []string{"push"}})
	require.NoError(t, err)
	stop := startWatch(t, w, &changes{})

	var pid int
	require.Eventually(t, func() bool {
		w.mu.Lock()
		pid = w.fwdPID
		w.mu.Unlock()
		return pid != 0 && len(srv.HookIDs()) == 2
	}, 20*time.Second, 20*time.Millisecond, "the forwarder runs and has made its hook")
	secret := forwarderSecret(t, w, pid)

	body := []byte(`{"zen":"forged","hook_id":` + strconv.FormatInt(persons.ID, 10) + `}`)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "forged-delivery")
	req.Header.Set("X-GitHub-Hook-ID", strconv.FormatInt(persons.ID, 10))
	req.Header.Set("X-Hub-Signature-256", webhook.Sign(secret, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "signed with the forwarder's secret, the delivery is taken")
	assert.True(t, w.Healthy().IsZero(), "a forged delivery makes the watch no healthier")

	// Once a delivery GitHub makes comes through the forwarder, its hook
	// is known, and the stop removes it and only it.
	require.NoError(t, os.Remove(stalled))
	srv.AddStatus(sha1, "ci/a", "success", "")
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 20*time.Second, 20*time.Millisecond)
	stop()
	assert.Equal(t, []int64{persons.ID}, srv.HookIDs(), "the person's hook is kept and the forwarder's removed")
}

// A forwarder that stays up but stops relaying (its websocket stalled,
// or answering GitHub without passing deliveries on) is found by the
// look at its hook's deliveries: the watch is unhealthy within a look,
// what the deliveries told of is read from GitHub, and the watch is
// healthy again once deliveries arrive.
func TestForwardModeFindsAForwarderThatStoppedRelaying(t *testing.T) {
	for _, tc := range []struct{ name, answers string }{
		{name: "GitHub's deliveries fail", answers: "502"},
		{name: "GitHub's deliveries are answered and not relayed", answers: "200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			srv.AddPR(githubtest.PR{HeadSHA: sha1})
			exe, err := os.Executable()
			require.NoError(t, err)
			t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
			stalled := filepath.Join(t.TempDir(), "stalled")
			w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{exe, "--drop-while=" + stalled},
				StateDir: t.TempDir(), CheckEvery: 300 * time.Millisecond})
			c := &changes{}
			startWatch(t, w, c)
			require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 20*time.Second, 20*time.Millisecond)
			time.Sleep(1100 * time.Millisecond) // past the receiver's first second

			require.NoError(t, os.WriteFile(stalled, []byte(tc.answers), 0o600))
			srv.AddStatus(sha1, "ci/a", "failure", "")
			require.Eventually(t, func() bool { made, _ := srv.Deliveries(); return made >= 3 }, 10*time.Second, 20*time.Millisecond,
				"the status is delivered to the stalled forwarder")
			require.Eventually(t, func() bool { return w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond,
				"a forwarder that relays nothing: not healthy")
			require.Eventually(t, func() bool { return c.has(forge.Change{SHA: sha1, What: "status"}) }, 10*time.Second, 20*time.Millisecond,
				"the delivery that did not arrive is read from GitHub")
			assert.Positive(t, w.WatchStats().Recovered)

			require.NoError(t, os.Remove(stalled))
			srv.AddStatus(sha1, "ci/b", "success", "")
			require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond,
				"healthy again once a delivery arrives")
		})
	}
}

// A person's own forwarder makes its cli hook after the watch listed the
// hooks and before the watch's forwarder makes its own: that new hook is
// not the watch's, as no delivery signed with the watch's secret names
// it. Neither a stop while the watch's forwarder is still starting, nor
// its forwarder ending and then meeting GitHub's 422, removes it.
func TestForwardModeLeavesAHookMadeWhileItsForwarderStarts(t *testing.T) {
	for _, tc := range []struct{ name, then string }{
		{name: "stopped while its forwarder starts", then: "stop"},
		{name: "its forwarder ends, then meets the other's hook", then: "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			exe, err := os.Executable()
			require.NoError(t, err)
			t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
			dir := t.TempDir()
			// The first run of the watch's forwarder says it started (the
			// watch has listed the hooks then), waits for the test, and
			// exits as a gh losing its websocket would; later runs are the
			// fake forwarder.
			script := `d=$0; exe=$1; shift
if [ ! -e "$d/ran" ]; then
  : > "$d/ran"
  while [ ! -e "$d/go" ]; do sleep 0.02; done
  echo "websocket: close 1006 (abnormal closure)" >&2; exit 1
fi
exec "$exe" "$@"`
			w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{"sh", "-c", script, dir, exe}, StateDir: dir, CheckEvery: time.Hour})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- w.Watch(ctx, func(forge.Change) {}) }()
			require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(dir, "ran")); return err == nil }, 20*time.Second, 10*time.Millisecond)

			// The person's forwarder, with a secret of its own, relaying to
			// a server of theirs.
			persons := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
			t.Cleanup(persons.Close)
			other := exec.Command(exe, "--repo=octo/app", "--events=*", "--url="+persons.URL, "--secret=theirs")
			require.NoError(t, other.Start())
			t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
			require.Eventually(t, func() bool { return len(srv.HookIDs()) == 1 }, 20*time.Second, 10*time.Millisecond)
			theirs := srv.HookIDs()[0]
			// The watch lists it and pings it; the ping reaches the person's
			// server, not the watch.
			require.Eventually(t, func() bool { made, ok := srv.Deliveries(); return made >= 2 && ok >= 2 }, 20*time.Second, 10*time.Millisecond)

			if tc.then == "stop" {
				cancel()
				require.NoError(t, <-done)
			} else {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o600))
				select {
				case err := <-done:
					require.ErrorIs(t, err, errOtherForwarder)
				case <-time.After(60 * time.Second):
					t.Fatal("the watch did not find the other forwarder's hook")
				}
			}
			assert.Equal(t, []int64{theirs}, srv.HookIDs(), "the person's forwarder's hook is kept")
			assert.True(t, w.Healthy().IsZero())
		})
	}
}

// openForwarding is a gh-forward watch with the fake forwarder, whose
// client tries each request once, so that one fault is one failed look.
func openForwarding(t *testing.T, srv *githubtest.Server, checkEvery time.Duration) *Watching {
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
	f, err := Open(context.Background(), github.Options{Repo: "octo/app", Host: "github.com", Token: srv.Token, BaseURL: srv.URL,
		Retry: github.RetryPolicy{MaxAttempts: 1}}, Events{Mode: ModeForward, ForwardCommand: []string{exe}, StateDir: t.TempDir(), CheckEvery: checkEvery})
	require.NoError(t, err)
	return f.(*Watching)
}

// One look GitHub does not answer leaves the watch unhealthy until the
// next that does, with no delivery needed to make it healthy again: on a
// quiet repository the poll is not left at its plain interval for hours.
func TestForwardModeHealthyAgainAfterALookThatFailed(t *testing.T) {
	srv := githubtest.New(t)
	w := openForwarding(t, srv, time.Second)
	startWatch(t, w, &changes{})
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 20*time.Second, 10*time.Millisecond)
	made, _ := srv.Deliveries()

	srv.FailNext(1, githubtest.Fault502.On(githubtest.EndpointListDeliveries))
	require.Eventually(t, func() bool { return srv.FaultsSent() == 1 && w.Healthy().IsZero() }, 10*time.Second, 5*time.Millisecond,
		"a look GitHub does not answer: not healthy")
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 10*time.Millisecond,
		"healthy again at the next look GitHub answers")
	again, _ := srv.Deliveries()
	assert.Equal(t, made, again, "no delivery was made meanwhile")
}

// The forwarder's hook removed on GitHub (by a person, or GitHub) is
// found by the next look: the forwarder, which makes no other, is started
// again, and the watch is healthy through the new one's hook.
func TestForwardModeStartsItsForwarderAgainWhenItsHookIsGone(t *testing.T) {
	srv := githubtest.New(t)
	w := openForwarding(t, srv, 300*time.Millisecond)
	startWatch(t, w, &changes{})
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 20*time.Second, 10*time.Millisecond)
	gone := srv.HookIDs()
	require.Len(t, gone, 1)

	require.NoError(t, w.api.DeleteHook(context.Background(), gone[0]))
	require.Eventually(t, func() bool { return w.Healthy().IsZero() }, 10*time.Second, 5*time.Millisecond, "its hook gone: not healthy")
	require.Eventually(t, func() bool {
		ids := srv.HookIDs()
		return len(ids) == 1 && ids[0] != gone[0] && !w.Healthy().IsZero()
	}, 20*time.Second, 20*time.Millisecond, "healthy again through a new forwarder's hook")
}

// A local process that reads the forwarder's secret off its command line
// floods the receiver with signed deliveries naming another hook: what
// came through the forwarder's hook is still remembered, so that what
// GitHub made and the receiver never took is still found lost.
func TestForwardModeFloodOfOtherHooksHidesNothing(t *testing.T) {
	srv := githubtest.New(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
	addr := freePort(t)
	w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{exe}, Listen: addr, StateDir: t.TempDir(), CheckEvery: time.Hour})
	startWatch(t, w, &changes{})
	var pid int
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		pid = w.fwdPID
		return pid != 0 && !w.since.IsZero()
	}, 20*time.Second, 10*time.Millisecond, "the forwarder's ping arrived")
	secret := forwarderSecret(t, w, pid)
	w.mu.Lock()
	other := strconv.FormatInt(w.fwdHook+1, 10)
	from := w.heardFrom
	var ours []string
	for guid := range w.heardAt {
		ours = append(ours, guid)
	}
	w.mu.Unlock()
	require.NotEmpty(t, ours)

	body := []byte(`{"zen":"forged","hook_id":` + other + `}`)
	for i := range maxHeard + 904 {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-GitHub-Delivery", "forged-"+strconv.Itoa(i))
		req.Header.Set("X-GitHub-Hook-ID", other)
		req.Header.Set("X-Hub-Signature-256", webhook.Sign(secret, body))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Equal(t, from, w.heardFrom, "the receiver forgot nothing")
	for _, guid := range ours {
		_, kept := w.heardAt[guid]
		assert.True(t, kept, "delivery %s through the forwarder's hook is still remembered", guid)
	}
}
