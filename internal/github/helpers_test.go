package github

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/github/githubtest"
	"github.com/agenttree/agenttree/internal/gittest"
)

// TestMain keeps the developer's gh login, config and environment out of
// the tests, so no test can pick up a real token or talk to a real host.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agenttree-github-test-")
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST", "GH_DEBUG"} {
		_ = os.Unsetenv(k)
	}
	_ = os.Setenv("GH_CONFIG_DIR", dir)
	_ = os.Setenv("GH_PATH", dir+"/no-gh-here")
	gittest.IsolateProcess()
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// sleeper records the waits the client asks for and returns at once, so
// retry and poll paths run in microseconds. hook runs on each wait.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
	hook  func(n int)
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	n := len(s.waits)
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return ctx.Err()
}

func (s *sleeper) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waits)
}

func (s *sleeper) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func newClient(t testing.TB, srv *githubtest.Server, tweak ...func(*Options)) (*Client, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	opts := Options{
		Repo:    srv.Owner + "/" + srv.Name,
		Host:    "github.com",
		Token:   srv.Token,
		BaseURL: srv.URL,
		Sleep:   sl.sleep,
	}
	for _, f := range tweak {
		f(&opts)
	}
	c, err := New(context.Background(), opts)
	require.NoError(t, err)
	return c, sl
}

const (
	sha1 = "1111111111111111111111111111111111111111"
	sha2 = "2222222222222222222222222222222222222222"
	sha3 = "3333333333333333333333333333333333333333"
)
