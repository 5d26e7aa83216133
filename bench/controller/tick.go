package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	"github.com/agenttree/agenttree/internal/proc"
)

// tickFigures are what one tick with every issue due cost, measured in a
// process of its own: a controller process's memory is the tick's and the
// runtime's, not the fake GitHub's.
type tickFigures struct {
	Due    int           `json:"due"`
	Failed int           `json:"failed"`
	Wall   time.Duration `json:"wall"`
	// Fetch is the part of Wall spent fetching the PRs' state from GitHub.
	Fetch time.Duration `json:"fetch"`
	// TotalAlloc is what the tick allocated; HeapAlloc the heap after it
	// (live and not yet collected); Sys what the runtime had from the OS.
	TotalAlloc uint64 `json:"total_alloc"`
	HeapAlloc  uint64 `json:"heap_alloc"`
	Sys        uint64 `json:"sys"`
	NumGC      uint32 `json:"num_gc"`
	// Live is the most the heap held live after a collection during the
	// tick (/gc/heap/live:bytes): what memlimit.PerIssue stands for.
	Live uint64 `json:"live"`
	// RSSKiB is the process's peak resident set size, start-up included;
	// CPU the process's user and system time.
	RSSKiB int64         `json:"-"`
	CPU    time.Duration `json:"-"`
	// Counts are the GitHub requests of the tick by kind.
	Counts []edge.Count `json:"-"`
}

// Flags of the tick process, which the benchmark starts as itself.
const (
	flagTick    = "tick-config"
	flagGitHub  = "tick-github"
	flagRepo    = "tick-repo"
	flagAt      = "tick-at"
	flagProfile = "tick-profile"
)

// measureTick runs one tick over the pipeline at config in a process of
// its own, at time at of the controller's clock, against srv; profile,
// when set, is the prefix of its profiles' files.
func measureTick(ctx context.Context, config string, srv *githubtest.Server, at time.Time, profile string) (tickFigures, error) {
	exe, err := os.Executable()
	if err != nil {
		return tickFigures{}, fmt.Errorf("finding this program to run a tick in a process of its own: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, "-"+flagTick, config, "-"+flagGitHub, srv.URL,
		"-"+flagRepo, fakeRepo(srv), "-"+flagAt, at.Format(time.RFC3339Nano), "-"+flagProfile, profile)
	// The token reaches the client the way a user's does.
	cmd.Env = append(os.Environ(), "GH_TOKEN="+srv.Token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	proc.Group(cmd)
	cmd.WaitDelay = time.Second
	srv.ResetCounts()
	if err := cmd.Run(); err != nil {
		return tickFigures{}, fmt.Errorf("tick process: %w: %s", err, stderr.Bytes())
	}
	var f tickFigures
	if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
		return tickFigures{}, fmt.Errorf("tick process printed %q: %w", stdout.Bytes(), err)
	}
	f.RSSKiB = proc.PeakRSSKiB(cmd.ProcessState)
	f.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	f.Counts = srv.Counts()
	if f.Failed > 0 {
		return f, fmt.Errorf("%d of the tick's %d passes failed", f.Failed, f.Due)
	}
	return f, nil
}

// runTick is the tick process: one tick of a controller over config, at
// time at of its clock, against the GitHub at url. It prints its figures
// as JSON.
func runTick(ctx context.Context, config, url, repo string, at time.Time, profile string) error {
	gh, err := newGitHubForge(ctx, url, repo, "")
	if err != nil {
		return err
	}
	f := &timedForge{Forge: gh}
	c := &controller.Controller{Load: func() (*engine.Engine, error) { return openEngine(config, f) }, Now: func() time.Time { return at }, BoundMemory: true}
	stop, err := startProfiles(profile)
	if err != nil {
		return err
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	live := watchLive()
	start := time.Now()
	sum, err := c.Tick(ctx)
	wall := time.Since(start)
	runtime.ReadMemStats(&after)
	most := live()
	if err := errors.Join(err, stop()); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(tickFigures{
		Due: sum.Due, Failed: sum.Failed, Wall: wall, Fetch: f.fetching(),
		TotalAlloc: after.TotalAlloc - before.TotalAlloc, HeapAlloc: after.HeapAlloc, Sys: after.Sys,
		NumGC: after.NumGC - before.NumGC, Live: most,
	})
}

// watchLive samples the heap live after the last collection until the
// returned func is called, which returns the most it saw. A collection
// of a tick comes every 100 ms or so: a sample every 5 ms sees each.
func watchLive() (most func() uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() uint64 {
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		m := read()
		for {
			select {
			case <-t.C:
				m = max(m, read())
			case <-stop:
				done <- max(m, read())
				return
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

// timedForge adds up the time its PRs calls take: the tick's batched
// fetch (the hooks read the batch, not the forge). It claims no
// capability of its own; forge.As finds them past it.
type timedForge struct {
	forge.Forge

	mu    sync.Mutex
	spent time.Duration
}

var _ forge.Wrapper = (*timedForge)(nil)

func (t *timedForge) Unwrap() (forge.Forge, error) { return t.Forge, nil }

func (t *timedForge) PRs(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	start := time.Now()
	defer func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.spent += time.Since(start)
	}()
	return t.Forge.PRs(ctx, numbers)
}

func (t *timedForge) fetching() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent
}
