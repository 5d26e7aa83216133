package pr

// Helpers the PR tests share: a clock that moves only when told, the
// config they run with, hooks run the way the engine runs them, and git
// repositories to push to.

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/local/localtest"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// TestMain serves as the local forge's CI runner when the forge starts
// this test binary as one, and runs the tests otherwise.
func TestMain(m *testing.M) {
	localtest.RunnerMain()
	os.Exit(m.Run())
}

// registry holds the PR hooks, with the earlier tool's alias, as the
// tests call them.
func registry() *hooks.Registry {
	r := hooks.NewRegistry(Defs()...)
	r.Alias("ci_check", "pr_ci_passed")
	return r
}

// testClock is the injected Env.Now: time moves only when a test says so.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// prConfig is the config the PR tests run with: the defaults of the
// canonical config, spelled out so the tests do not depend on them.
func prConfig() *stages.Config {
	return &stages.Config{DefaultBranch: "main",
		CIPolling: stages.CIPolling{Timeout: 10 * time.Minute, PollInterval: 30 * time.Second, NewRunTimeout: 30 * time.Minute},
		Conflicts: stages.ConflictHandling{AutoRebase: true, NotifyOnRebase: true}}
}

// runHook runs a hook the way the engine does and applies the outcome's
// watch updates (an empty value deletes a key) to the issue snapshot.
func runHook(t *testing.T, env *hooks.Env, issue *hooks.Issue, name string, params map[string]any) hooks.Outcome {
	t.Helper()
	entry := &stages.HookEntry{Name: name, Params: params}
	o := registry().Run(context.Background(), entry, issue, env)
	if len(o.Watch) > 0 {
		if issue.Watch == nil {
			issue.Watch = map[string]string{}
		}
		for k, v := range o.Watch {
			if v == "" {
				delete(issue.Watch, k)
			} else {
				issue.Watch[k] = v
			}
		}
	}
	return o
}

// gitRemoteRepo is a bare repository as the git remote and a clone of it on
// branch issue-7 with one commit the remote does not have yet.
func gitRemoteRepo(t *testing.T) (bare, work string) {
	t.Helper()
	bare, work = gittest.NewRemote(t)
	gittest.Run(t, work, "checkout", "--quiet", "-b", "issue-7")
	gittest.Commit(t, work, "login.go", "package login\n", "add login")
	return bare, work
}

func revParse(t *testing.T, dir, rev string) string {
	t.Helper()
	return gittest.Run(t, dir, "rev-parse", rev)
}

// branchIn is the branch's head in repo dir, "" if it has none.
func branchIn(t *testing.T, dir, branch string) string {
	t.Helper()
	sha, err := (&gitx.Repo{Dir: dir}).RevParse(context.Background(), "refs/heads/"+branch)
	if errors.Is(err, gitx.ErrNoRef) {
		return ""
	}
	require.NoError(t, err)
	return sha
}
