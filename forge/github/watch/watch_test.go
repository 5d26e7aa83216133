package watch

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// changes collects what a Watch tells of.
type changes struct {
	mu  sync.Mutex
	got []forge.Change
}

func (c *changes) add(ch forge.Change) { c.mu.Lock(); c.got = append(c.got, ch); c.mu.Unlock() }

func (c *changes) has(want forge.Change) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.got {
		if g == want {
			return true
		}
	}
	return false
}

// freePort is a loopback address nothing listens on now.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func openWatching(t *testing.T, srv *githubtest.Server, ev Events) *Watching {
	t.Helper()
	f, err := Open(context.Background(), github.Options{Repo: "octo/app", Host: "github.com", Token: srv.Token, BaseURL: srv.URL}, ev)
	require.NoError(t, err)
	w, ok := forge.As[forge.Watcher](f)
	require.True(t, ok, "events on: the forge is a Watcher")
	return w.(*Watching)
}

// startWatch runs w.Watch until the test ends or stop is called.
func startWatch(t *testing.T, w *Watching, c *changes) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Watch(ctx, c.add) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			assert.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestPollModeIsNoWatcher(t *testing.T) {
	srv := githubtest.New(t)
	f, err := Open(context.Background(), github.Options{Repo: "octo/app", Host: "github.com", Token: srv.Token, BaseURL: srv.URL}, Events{Mode: ModePoll})
	require.NoError(t, err)
	_, ok := forge.As[forge.Watcher](f)
	assert.False(t, ok)
}

// The whole path offline: the fake GitHub changes a PR, signs the
// delivery to the hook webhook mode made, the receiver checks it, and the
// change reaches Watch's callback; a restart reuses the hook and fills
// the gap from the deliveries API.
func TestWebhookMode(t *testing.T) {
	srv := githubtest.New(t)
	pr := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	addr := freePort(t)
	state := t.TempDir()
	ev := Events{Mode: ModeWebhook, URL: "http://" + addr + "/github", Listen: addr, StateDir: state, CheckEvery: time.Hour}
	w := openWatching(t, srv, ev)
	c := &changes{}
	stop := startWatch(t, w, c)

	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond, "the hook's ping makes the watch healthy")
	require.Len(t, srv.HookIDs(), 1)
	hookID := srv.HookIDs()[0]

	run := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	srv.CompleteCheckRun(run, "failure")
	require.Eventually(t, func() bool { return c.has(forge.Change{PR: pr, SHA: sha1, What: "check_run.completed"}) }, 10*time.Second, 20*time.Millisecond)
	srv.SetHead(pr, sha2)
	srv.AddReview(pr, githubtest.Review{State: "CHANGES_REQUESTED"})
	srv.AddStatus(sha2, "ci/other", "failure", "")
	require.Eventually(t, func() bool {
		return c.has(forge.Change{PR: pr, SHA: sha2, What: "pull_request.synchronize"}) && c.has(forge.Change{SHA: sha2, What: "push"}) &&
			c.has(forge.Change{PR: pr, SHA: sha2, What: "pull_request_review.submitted"}) && c.has(forge.Change{SHA: sha2, What: "status"})
	}, 10*time.Second, 20*time.Millisecond)

	// Down: what GitHub delivers now fails, and is not delivered again.
	stop()
	assert.True(t, w.Healthy().IsZero())
	srv.CompleteCheckRun(srv.AddCheckRun(sha2, githubtest.CheckRun{Name: "lint"}), "failure")
	require.Eventually(t, func() bool { made, ok := srv.Deliveries(); return made-ok >= 2 }, 10*time.Second, 20*time.Millisecond)

	c2 := &changes{}
	w2 := openWatching(t, srv, ev)
	startWatch(t, w2, c2)
	require.Eventually(t, func() bool { return !w2.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, []int64{hookID}, srv.HookIDs(), "the restart reuses its hook")
	assert.True(t, c2.has(forge.Change{PR: pr, SHA: sha2, What: "check_run.completed"}), "the gap is filled from the deliveries API: %v", c2.got)
	assert.Equal(t, int64(1), w2.WatchStats().GapsFilled)
	assert.GreaterOrEqual(t, w2.WatchStats().Recovered, int64(2))
}

func TestWebhookModeRemakesADeletedHook(t *testing.T) {
	srv := githubtest.New(t)
	addr := freePort(t)
	ev := Events{Mode: ModeWebhook, URL: "http://" + addr + "/", Listen: addr, StateDir: t.TempDir(), CheckEvery: time.Hour}
	w := openWatching(t, srv, ev)
	stop := startWatch(t, w, &changes{})
	require.Eventually(t, func() bool { return len(srv.HookIDs()) == 1 }, 10*time.Second, 20*time.Millisecond)
	stop()
	srv.DeleteHook(srv.HookIDs()[0])

	w2 := openWatching(t, srv, ev)
	startWatch(t, w2, &changes{})
	require.Eventually(t, func() bool { return !w2.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond)
	assert.Len(t, srv.HookIDs(), 1)
}

// Deliveries without the hook's signature are refused and counted, and
// tell of nothing.
func TestWebhookRefusesUnsigned(t *testing.T) {
	srv := githubtest.New(t)
	addr := freePort(t)
	w := openWatching(t, srv, Events{Mode: ModeWebhook, URL: "http://" + addr + "/", Listen: addr, StateDir: t.TempDir(), CheckEvery: time.Hour})
	c := &changes{}
	startWatch(t, w, c)
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 10*time.Second, 20*time.Millisecond)
	for _, sig := range []string{"", "sha256=" + strings.Repeat("0", 64)} {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(`{"action":"opened","pull_request":{"number":1}}`))
		require.NoError(t, err)
		req.Header.Set("X-GitHub-Event", "pull_request")
		if sig != "" {
			req.Header.Set("X-Hub-Signature-256", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, resp.StatusCode)
	}
	assert.Equal(t, int64(2), w.WatchStats().Refused)
	assert.Empty(t, c.got)
}

func TestWebhookSecretFileMustBePrivate(t *testing.T) {
	srv := githubtest.New(t)
	file := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(file, []byte("s3cret\n"), 0o644))
	w := openWatching(t, srv, Events{Mode: ModeWebhook, URL: "http://127.0.0.1:1/", Listen: freePort(t), SecretFile: file, StateDir: t.TempDir()})
	err := w.Watch(context.Background(), func(forge.Change) {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chmod 600")
}

// gh-forward mode with a forwarder that is killed: the restart meets
// GitHub's 422 for the stale hook, reads what the stale hook failed to
// deliver, removes it, and forwards again.
func TestForwardModeSurvivesAKilledForwarder(t *testing.T) {
	srv := githubtest.New(t)
	pr := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(fakeForwarderEnv, srv.URL+" "+srv.Token)
	w := openWatching(t, srv, Events{Mode: ModeForward, ForwardCommand: []string{exe}, StateDir: t.TempDir(), CheckEvery: time.Hour})
	c := &changes{}
	stop := startWatch(t, w, c)
	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 20*time.Second, 20*time.Millisecond)

	srv.SetHead(pr, sha2)
	require.Eventually(t, func() bool { return c.has(forge.Change{PR: pr, SHA: sha2, What: "pull_request.synchronize"}) }, 10*time.Second, 20*time.Millisecond)

	w.mu.Lock()
	pid := w.fwdPID
	w.mu.Unlock()
	require.NotZero(t, pid)
	proc, err := os.FindProcess(pid)
	require.NoError(t, err)
	require.NoError(t, proc.Kill(), "SIGKILL: the forwarder cannot remove its hook")
	require.Eventually(t, func() bool { return w.Healthy().IsZero() }, 10*time.Second, 10*time.Millisecond)
	// Delivered to the dead forwarder's hook, and failed.
	srv.CompleteCheckRun(srv.AddCheckRun(sha2, githubtest.CheckRun{Name: "test"}), "failure")

	require.Eventually(t, func() bool { return !w.Healthy().IsZero() }, 30*time.Second, 20*time.Millisecond, "forwarding again")
	assert.True(t, c.has(forge.Change{PR: pr, SHA: sha2, What: "check_run.completed"}), "the gap is filled from the stale hook's deliveries: %v", c.got)
	assert.GreaterOrEqual(t, w.WatchStats().GapsFilled, int64(1))
	require.Len(t, srv.HookIDs(), 1, "the stale hook is gone, the new forwarder's is there")

	srv.AddReview(pr, githubtest.Review{State: "APPROVED"})
	require.Eventually(t, func() bool { return c.has(forge.Change{PR: pr, SHA: sha2, What: "pull_request_review.submitted"}) }, 10*time.Second, 20*time.Millisecond)
	stop()
	assert.Empty(t, srv.HookIDs(), "a watch that ends removes its forwarder's hook")
}

// gh-forward's receiver is on loopback only, whoever builds the Events:
// its forwarder runs on this machine. Webhook mode may listen beyond.
func TestForwardModeListensOnLoopbackOnly(t *testing.T) {
	srv := githubtest.New(t)
	opts := github.Options{Repo: "octo/app", Host: "github.com", Token: srv.Token, BaseURL: srv.URL}
	for _, tt := range []struct {
		mode, listen string
		ok           bool
	}{
		{ModeForward, "", true},
		{ModeForward, "127.0.0.1:0", true},
		{ModeForward, "[::1]:8080", true},
		{ModeForward, "localhost:8080", true},
		{ModeForward, "0.0.0.0:8080", false},
		{ModeForward, ":8080", false},
		{ModeForward, "192.0.2.1:8080", false},
		{ModeForward, "example.com:8080", false},
		{ModeWebhook, "0.0.0.0:8080", true},
	} {
		t.Run(tt.mode+" "+tt.listen, func(t *testing.T) {
			_, err := Open(context.Background(), opts, Events{Mode: tt.mode, Listen: tt.listen, StateDir: t.TempDir()})
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "loopback only")
		})
	}
}
