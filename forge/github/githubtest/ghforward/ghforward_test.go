package ghforward_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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
