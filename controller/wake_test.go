package controller

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/wake"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/forge/local/localtest"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func TestMain(m *testing.M) {
	localtest.RunnerMain()
	os.Exit(m.Run())
}

// onLocal waits for the local forge's CI with a poll of ten minutes: what
// the controller does within seconds of CI ending, a change told it. CI
// takes a second, so the first pass sees it pending.
const onLocal = `
project: shop
forge: local
ci:
  command: sleep 1; false
ci_polling:
  poll_interval_s: 600
  min_interval_s: 600
  max_interval_s: 600
stages:
  - name: backlog
    parking_lot: true
  - name: implement
  - name: pr_ready
    host: controller
    post_start:
      - create_pr:
      - wait_for_ci: {on_failure: step_back}
    pre_completion:
      - pr_ci_passed:
    on_failure:
      step_back_to: implement
      message: "{{failure_reason}}"
  - name: accepted
    terminal: completion
`

// localRig is a clone of a bare origin with the pipeline config, an
// engine on the local forge over it, and a controller over the same.
type localRig struct {
	dir string
	e   *engine.Engine
	c   *Controller
	log *syncBuffer
}

func newLocalRig(t *testing.T, config string) *localRig {
	t.Helper()
	_, dir := gittest.NewRemote(t)
	gittest.Commit(t, dir, ".gitignore", "/_agenttree/\n", "ignore agenttree's state")
	gittest.Commit(t, dir, stages.FileName, config, "the pipeline")
	gittest.Run(t, dir, "push", "-q", "origin", "main")
	open := func() (*engine.Engine, error) {
		path := filepath.Join(dir, stages.FileName)
		reg := builtin.Registry()
		cfg, err := load.File(path, reg)
		if err != nil {
			return nil, err
		}
		stateDir := filepath.Join(dir, "_agenttree")
		store, err := issues.Open(stateDir)
		if err != nil {
			return nil, err
		}
		f, err := local.New(context.Background(), local.Options{StateDir: stateDir, RepoDir: dir, Project: cfg.Project, CICommand: cfg.CI.Command})
		if err != nil {
			return nil, err
		}
		return engine.New(cfg, store, reg, nil, engine.WithForge(f),
			engine.WithGit(func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} })), nil
	}
	e, err := open()
	require.NoError(t, err)
	log := &syncBuffer{}
	c := &Controller{Load: open, Interval: 10 * time.Minute, Log: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		// No tmux server on this socket: messages to agents stay queued.
		Tmux: &tmux.Client{Socket: filepath.Join(t.TempDir(), "no-tmux"), LockDir: e.Store.Root()}}
	return &localRig{dir: dir, e: e, c: c, log: log}
}

// atPRReady is an issue whose agent committed on its branch and moved it
// to pr_ready, the controller's stage.
func (r *localRig) atPRReady(t *testing.T) int {
	t.Helper()
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: "Add checkout page", Stage: "implement"})
	require.NoError(t, err)
	gittest.Run(t, r.dir, "checkout", "-q", "-b", iss.Branch)
	gittest.Commit(t, r.dir, "checkout.txt", "checkout\n", "checkout page")
	res, err := r.e.Next(context.Background(), iss.ID, engine.Actor{Kind: engine.ActorAgent, Role: "developer"}, false)
	require.NoError(t, err)
	require.Equal(t, "pr_ready", res.To, "%+v", res)
	return iss.ID
}

// run runs the controller until the test ends.
func (r *localRig) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		if t.Failed() {
			t.Logf("controller log:\n%s", r.log.String())
		}
	})
}

// stage is issue id's stage; "" when it cannot be read.
func (r *localRig) stage(id int) string {
	iss, err := r.e.Store.Get(id)
	if err != nil {
		return ""
	}
	return iss.Stage
}

// CI going red on the local forge steps the issue back within seconds,
// though the poll would look again in ten minutes: the forge's watch woke
// the controller. With the watch off the issue waits for the poll.
func TestCIFinishingWakesTheController(t *testing.T) {
	tests := []struct {
		name    string
		noWatch bool
	}{
		{"watched", false},
		{"poll only", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newLocalRig(t, onLocal)
			r.c.NoWatch = tt.noWatch
			id := r.atPRReady(t)
			r.run(t)
			// The first pass opens the PR and finds CI pending.
			require.Eventually(t, func() bool {
				w, err := r.e.Store.ReadWatch(id)
				return err == nil && w.Poll != nil
			}, 30*time.Second, 20*time.Millisecond, "the first pass polls the PR")
			w, err := r.e.Store.ReadWatch(id)
			require.NoError(t, err)
			require.Greater(t, time.Until(w.Poll.NextAt), 4*time.Minute, "the poll looks again in minutes, not seconds")

			if tt.noWatch {
				assert.Never(t, func() bool { return r.stage(id) != "pr_ready" }, 4*time.Second, 100*time.Millisecond,
					"without the watch nothing looks before the poll")
				return
			}
			require.Eventually(t, func() bool { return r.stage(id) == "implement" }, 30*time.Second, 20*time.Millisecond,
				"CI's red is acted on when it ends, not at the poll ten minutes later")
			iss, err := r.e.Store.Get(id)
			require.NoError(t, err)
			back := iss.History[len(iss.History)-1]
			assert.Equal(t, []any{"pr_ready", "implement", stages.MoveStepBack}, []any{back.From, back.To, back.Kind})
			assert.Contains(t, back.Reason, "CI failed")
		})
	}
}

// syncBuffer is a log that the controller's goroutines write at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// While the forge's watch is healthy, a PR waiting on CI is polled again
// in half an hour (wake.HealthyPoll), the interval without the watch kept beside; with the
// watch off, at the config's 30 s.
func TestAHealthyWatchStretchesThePoll(t *testing.T) {
	tests := []struct {
		name     string
		noWatch  bool
		wantNext time.Duration
	}{
		{"watched", false, wake.HealthyPoll},
		{"poll only", true, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := strings.Replace(onLocal, "command: sleep 1; false", "command: sleep 5; false", 1)
			config = strings.ReplaceAll(config, "_interval_s: 600", "_interval_s: 30")
			r := newLocalRig(t, config)
			r.c.NoWatch, r.c.Interval = tt.noWatch, 200*time.Millisecond
			r.run(t)
			if !tt.noWatch {
				require.Eventually(t, r.c.wake.Healthy, 30*time.Second, 20*time.Millisecond, "the watch starts after the first tick")
			}
			id := r.atPRReady(t)
			var p *issues.Poll
			require.Eventually(t, func() bool {
				w, err := r.e.Store.ReadWatch(id)
				if err != nil {
					return false
				}
				p = w.Poll
				return p != nil
			}, 30*time.Second, 20*time.Millisecond, "the controller polls the PR")
			assert.Equal(t, "pr_ready", r.stage(id), "CI is still running")
			assert.Equal(t, 30, p.IntervalS, "the interval without the watch")
			assert.Equal(t, tt.wantNext, p.NextAt.Sub(p.PolledAt), "the next poll")
		})
	}
}
