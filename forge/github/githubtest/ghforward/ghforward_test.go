package ghforward_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/ghforward"
)

const env = "AGENTTREE_TEST_GHFORWARD"

func TestMain(m *testing.M) {
	ghforward.Main(env)
	os.Exit(m.Run())
}

// The forwarder makes the "cli" hook and relays a delivery, signed, to
// --url, answering with the receiver's status; a second one meets the
// fake's 422 for the hook that is there and fails as gh does.
func TestForwardRelaysAndASecondMeets422(t *testing.T) {
	srv := githubtest.New(t)
	pr := srv.AddPR(githubtest.PR{HeadSHA: "1111111111111111111111111111111111111111"})
	var mu sync.Mutex
	var got []http.Header
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(recv.Close)

	forward := func() *exec.Cmd {
		cmd, err := ghforward.Command(env, srv.URL, srv.Token)
		require.NoError(t, err)
		c := exec.Command(cmd[0], append(cmd[1:], "--repo", srv.Owner+"/"+srv.Name, "--events", "pull_request", "--url", recv.URL, "--secret", "s3cret")...)
		return c
	}
	first := forward()
	require.NoError(t, first.Start())
	t.Cleanup(func() { _ = first.Process.Kill(); _ = first.Wait() })
	require.Eventually(t, func() bool { return len(srv.HookIDs()) == 1 }, 20*time.Second, 20*time.Millisecond)

	// The fake pings a new hook, then delivers the push to the PR.
	require.Eventually(t, func() bool { _, ok := srv.Deliveries(); return ok == 1 }, 20*time.Second, 20*time.Millisecond)
	srv.SetHead(pr, "2222222222222222222222222222222222222222")
	require.Eventually(t, func() bool { _, ok := srv.Deliveries(); return ok == 2 }, 20*time.Second, 20*time.Millisecond)
	mu.Lock()
	require.Len(t, got, 2)
	assert.Equal(t, "ping", got[0].Get("X-GitHub-Event"))
	assert.Equal(t, "pull_request", got[1].Get("X-GitHub-Event"))
	assert.NotEmpty(t, got[1].Get("X-Hub-Signature-256"))
	mu.Unlock()

	second := forward()
	var stderr bytes.Buffer
	second.Stderr = &stderr
	err := second.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr.String(), "HTTP 422")
	assert.Len(t, srv.HookIDs(), 1)
}

// With --drop-while naming a file that exists, the forwarder relays
// nothing and answers with the status the file holds (502 when none):
// GitHub records a failed delivery, or a delivered one the receiver never
// had. Once the file is gone it relays again.
func TestDropWhileStallsTheForwarder(t *testing.T) {
	for _, tc := range []struct {
		name, holds string
		ok          int // deliveries GitHub records as delivered, of the ping
	}{
		{name: "failing", holds: "", ok: 0},
		{name: "acknowledged", holds: "200", ok: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New(t)
			pr := srv.AddPR(githubtest.PR{HeadSHA: "1111111111111111111111111111111111111111"})
			var mu sync.Mutex
			var got []string
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = append(got, r.Header.Get("X-GitHub-Event"))
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(recv.Close)
			stalled := filepath.Join(t.TempDir(), "stalled")
			require.NoError(t, os.WriteFile(stalled, []byte(tc.holds), 0o600))

			cmd, err := ghforward.Command(env, srv.URL, srv.Token)
			require.NoError(t, err)
			c := exec.Command(cmd[0], append(cmd[1:], "--drop-while="+stalled, "--repo", srv.Owner+"/"+srv.Name, "--events", "pull_request", "--url", recv.URL, "--secret", "s3cret")...)
			require.NoError(t, c.Start())
			t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
			require.Eventually(t, func() bool { made, _ := srv.Deliveries(); return made == 1 }, 20*time.Second, 20*time.Millisecond, "the ping is attempted")
			_, ok := srv.Deliveries()
			assert.Equal(t, tc.ok, ok)

			require.NoError(t, os.Remove(stalled))
			srv.SetHead(pr, "2222222222222222222222222222222222222222")
			require.Eventually(t, func() bool { _, ok := srv.Deliveries(); return ok == tc.ok+1 }, 20*time.Second, 20*time.Millisecond, "relaying again")
			mu.Lock()
			assert.Equal(t, []string{"pull_request"}, got, "the stalled forwarder relayed nothing")
			mu.Unlock()
		})
	}
}
