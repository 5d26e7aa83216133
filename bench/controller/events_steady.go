package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agenttree/agenttree/bench/internal/ghevents"
	"github.com/agenttree/agenttree/bench/internal/report"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	"github.com/agenttree/agenttree/forge/github/watch"
)

// webhookCheckEvery is either events mode's default look at its hook's
// deliveries (watch.Events.CheckEvery), on the controller's clock.
const webhookCheckEvery = 5 * time.Minute

// tickClock is the controller's clock while Run, not the benchmark,
// drives the ticks: it moves one step at each tick's first look at it,
// so hours pass in minutes and every tick sees its own step. The first
// look is told from the others by two things: the controller waited
// (no look for at least gap of the wall clock), and no PR state was
// fetched since the last look (a tick's passes look after their batch
// is fetched, a tick's start before).
type tickClock struct {
	srv  *githubtest.Server
	step time.Duration
	gap  time.Duration

	mu sync.Mutex
	// held keeps the clock still: until the watch is healthy, which takes
	// a second or so of the wall clock, minutes of the controller's.
	held    bool
	now     time.Time
	last    time.Time // on the wall clock
	fetched int       // GraphQL requests at the last look
	ticks   int
}

func (c *tickClock) Now() time.Time {
	fetched := c.srv.Requests(githubtest.EndpointGraphQL)
	wall := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held && wall.Sub(c.last) >= c.gap && fetched == c.fetched {
		c.now = c.now.Add(c.step)
		c.ticks++
	}
	c.last, c.fetched = wall, fetched
	return c.now
}

// release lets the clock move.
func (c *tickClock) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
}

// read is the clock and its ticks so far.
func (c *tickClock) read() (time.Time, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now, c.ticks
}

// resetCounts zeroes the fake's counts without the clock taking it for
// a fetch.
func (c *tickClock) resetCounts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.srv.ResetCounts()
	c.fetched = 0
}

// modeFigures are one events mode's requests per watched PR per hour.
type modeFigures struct {
	warm, steady float64 // per PR-hour: the warm-up's, the measured part's
	// quota is steady without the requests answered 304, which GitHub
	// does not count against the rate limit.
	quota float64
	// atRate is steady with the looks at the hook's deliveries counted at
	// their real rate (one each webhookCheckEvery of the controller's
	// clock) in place of those the sped-up look made; looks is how many
	// it made.
	atRate float64
	looks  int
	counts []edge.Count
	ticks  int
	wall   time.Duration
}

// benchEventsSteady runs, for each events mode, the controller's Run
// over its own issues on the fake (the watch healthy in webhook and
// gh-forward mode) through a warm-up and a measured part of the
// controller's clock, and prints the requests per watched PR-hour side
// by side. It returns whether the events modes met the target.
func benchEventsSteady(ctx context.Context, o options, dir string, srv *githubtest.Server) ([]bool, error) {
	measured := time.Duration(o.hours * float64(time.Hour))
	fmt.Printf("\nrequests per watched PR-hour by events.mode: %d issues each, the controller's Run ticking every %s of the wall clock as %s of its own; %s warm-up, %s measured\n",
		o.issues, o.eventsTick, o.eventsStep, o.warmup, measured)
	figs := map[ghevents.Mode]modeFigures{}
	// A tick takes the wall clock's -events-tick and the tick's own work:
	// each mode's run tells the next how long, for the look at its hook's
	// deliveries.
	perTick := o.eventsTick
	for _, m := range o.modes {
		f, err := eventsSteady(ctx, o, filepath.Join(dir, string(m)), srv, m, measured, perTick)
		if err != nil {
			return nil, fmt.Errorf("events.mode %s: %w", m, err)
		}
		figs[m] = f
		perTick = f.wall / time.Duration(max(f.ticks, 1))
		fmt.Printf("  %-10s %d ticks in %s of wall time; measured by kind: %s\n", m, f.ticks, secs(f.wall), report.Kinds(f.counts))
	}
	poll, havePoll := figs[watch.ModePoll]
	fmt.Printf("\n  %-10s %20s %14s %18s %22s %9s\n", "mode", "warm-up (fresh PRs)", "steady state", "steady, no 304s", "looks every 5 min", "vs poll")
	var met []bool
	for _, m := range o.modes {
		f := figs[m]
		ratio := "—"
		if havePoll && m != watch.ModePoll {
			ratio = fmt.Sprintf("%.2f×", f.atRate/max(poll.steady, 1e-9))
		}
		verdict := ""
		if m != watch.ModePoll {
			verdict = fmt.Sprintf("   target ≤ %.2f: %s (%d looks made)", targetEventsPerPRHour, report.Verdict(f.atRate <= targetEventsPerPRHour), f.looks)
			met = append(met, f.atRate <= targetEventsPerPRHour)
		}
		fmt.Printf("  %-10s %20.3f %14.3f %18.3f %22.3f %9s%s\n", m, f.warm, f.steady, f.quota, f.atRate, ratio, verdict)
	}
	return met, nil
}

// eventsSteady is one mode's run.
// The look at the hook's deliveries is on the wall clock: it is sped
// up as the controller's clock is (perTick of the wall clock a step), so
// that it comes about as often per hour of the controller's clock as it
// would. That is only near (the speed is the mode before's): the figures
// print how often it came, and count the looks at their real rate.
func eventsSteady(ctx context.Context, o options, dir string, srv *githubtest.Server, m ghevents.Mode, measured, perTick time.Duration) (modeFigures, error) {
	defer ghevents.DropHooks(srv)
	checkEvery := time.Duration(float64(webhookCheckEvery) * float64(perTick) / float64(o.eventsStep))
	mf, err := ghevents.Open(ctx, m, srv, dir, max(checkEvery, time.Second))
	if err != nil {
		return modeFigures{}, err
	}
	p, _, err := placeIssues(ctx, o.issues, dir, srv, mf.Forge)
	if err != nil {
		return modeFigures{}, err
	}
	clk := &tickClock{srv: srv, step: o.eventsStep, gap: o.eventsTick * 3 / 5, now: time.Now(), held: true}
	start, _ := clk.read()
	clk.resetCounts()
	logFile, err := os.Create(filepath.Join(dir, "controller.log"))
	if err != nil {
		return modeFigures{}, err
	}
	defer logFile.Close()
	c := &controller.Controller{Load: p.load, Now: clk.Now, Interval: o.eventsTick,
		Log: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var runErr error
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		runErr = c.Run(runCtx)
		stop()
	}()
	began := time.Now()
	f, err := func() (modeFigures, error) {
		var f modeFigures
		if err := mf.WaitHealthy(runCtx, firstPollWithin); err != nil {
			return f, err
		}
		clk.release()
		if err := clockReaches(runCtx, clk, start.Add(o.warmup)); err != nil {
			return f, err
		}
		warm := total(srv.Counts())
		clk.resetCounts()
		if err := clockReaches(runCtx, clk, start.Add(o.warmup+measured)); err != nil {
			return f, err
		}
		f.counts = srv.Counts()
		f.warm = float64(warm) / float64(o.issues) / o.warmup.Hours()
		f.steady = float64(total(f.counts)) / float64(o.issues) / measured.Hours()
		f.quota = float64(total(f.counts)-notModified(f.counts)) / float64(o.issues) / measured.Hours()
		f.looks = requestsTo(f.counts, deliveriesList)
		f.atRate = f.steady
		if m != watch.ModePoll {
			looks := measured.Hours() * float64(time.Hour/webhookCheckEvery)
			f.atRate = (float64(total(f.counts)-f.looks) + looks) / float64(o.issues) / measured.Hours()
		}
		_, f.ticks = clk.read()
		f.wall = time.Since(began)
		return f, nil
	}()
	stop()
	<-stopped
	return f, errors.Join(err, runErr)
}

// deliveriesList is the endpoint of a look at a hook's deliveries.
const deliveriesList = "GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries"

// requestsTo counts the requests to endpoint.
func requestsTo(counts []edge.Count, endpoint string) int {
	n := 0
	for _, c := range counts {
		if c.Endpoint == endpoint {
			n += c.Requests
		}
	}
	return n
}

func notModified(counts []edge.Count) int {
	n := 0
	for _, c := range counts {
		n += c.NotModified
	}
	return n
}

// clockReaches waits for the controller's clock to reach at.
func clockReaches(ctx context.Context, clk *tickClock, at time.Time) error {
	look := time.NewTicker(lookEvery)
	defer look.Stop()
	for {
		if now, _ := clk.read(); !now.Before(at) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the controller stopped before its clock reached %s: %w", at.Format(time.TimeOnly), ctx.Err())
		case <-look.C:
		}
	}
}
