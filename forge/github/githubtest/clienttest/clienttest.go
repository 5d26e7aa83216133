// Package clienttest is what the tests of a GitHub client need beside the
// fake server (githubtest): a test binary kept apart from the developer's
// gh login and environment, and a sleep that records its waits and
// returns at once.
package clienttest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// RunIsolated runs a test binary's tests (call it from TestMain) with the
// developer's gh login, config and environment kept out, so that no test
// can pick up a real token or talk to a real host.
func RunIsolated(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agenttree-github-test-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST", "GH_DEBUG"} {
		if err := os.Unsetenv(k); err != nil {
			panic(err)
		}
	}
	for k, v := range map[string]string{"GH_CONFIG_DIR": dir, "GH_PATH": filepath.Join(dir, "no-gh-here")} {
		if err := os.Setenv(k, v); err != nil {
			panic(err)
		}
	}
	return m.Run()
}

// Sleeper stands in for a client's sleep: it records the waits asked for
// and returns at once, so retry and poll paths run in microseconds.
type Sleeper struct {
	mu     sync.Mutex
	waits  []time.Duration
	onWait func(n int)
}

// Sleep records d, runs the OnWait hook, and returns ctx's error.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	n, hook := len(s.waits), s.onWait
	s.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return ctx.Err()
}

// OnWait has f run on each wait, with the number of waits so far: the
// place for what happens while a client waits (a reset, a push, a
// cancel).
func (s *Sleeper) OnWait(f func(n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onWait = f
}

// Waits returns the waits asked for so far.
func (s *Sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}
