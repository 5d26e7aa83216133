package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/bench/internal/fixture"
	"github.com/agenttree/agenttree/bench/internal/report"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine/issues/scancache"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// benchWatching places the issues, then measures a first tick with every
// issue due, the steady state, the one-round-per-PR comparison and a
// steady tick with every issue due. It returns which targets were met.
func benchWatching(ctx context.Context, o options, dir string, srv *githubtest.Server, f forge.Forge) ([]bool, error) {
	p, prs, err := placeIssues(ctx, o.issues, dir, srv, f)
	if err != nil {
		return nil, err
	}
	clk := fixture.NewClock(time.Now())
	fmt.Println("\none tick with every issue due (a controller process of its own)")
	first, err := printTick(ctx, "first look", p, srv, clk.Now(), o)
	if err != nil {
		return nil, err
	}
	perHour, err := printSteady(ctx, o, p, srv, clk)
	if err != nil {
		return nil, err
	}
	if err := printPollEach(ctx, o, f, prs, srv, perHour); err != nil {
		return nil, err
	}
	fmt.Println("\none tick with every issue due, after the steady state")
	again, err := printTick(ctx, "steady", p, srv, clk.Now().Add(time.Hour), o)
	if err != nil {
		return nil, err
	}
	wall := max(first.Wall, again.Wall)
	rss := float64(max(first.RSSKiB, again.RSSKiB)) / 1024
	fmt.Printf("  targets: wall < %s: %s   peak RSS < %.0f MiB: %s\n", secs(targetTickWall), report.Verdict(wall < targetTickWall),
		targetTickMiB, report.Verdict(rss < targetTickMiB))
	return []bool{perHour <= targetPerPRHour, wall < targetTickWall, rss < targetTickMiB}, nil
}

// placeIssues makes the pipeline and its issues, each waiting on CI.
func placeIssues(ctx context.Context, n int, dir string, srv *githubtest.Server, f forge.Forge) (*pipeline, []waiting, error) {
	p, err := newPipeline(dir, settings{}, srv, f)
	if err != nil {
		return nil, nil, err
	}
	began := time.Now()
	prs := make([]waiting, 0, n)
	for i := range n {
		w, err := p.addWaiting(ctx, fmt.Sprintf("Watched issue %d", i+1))
		if err != nil {
			return nil, nil, err
		}
		prs = append(prs, w)
	}
	fmt.Printf("setup: %d issues at pr_ready and their PRs in %s\n", n, secs(time.Since(began)))
	return p, prs, nil
}

// printTick measures one tick at time at, in which every one of the
// pipeline's issues must be due, and prints it.
func printTick(ctx context.Context, label string, p *pipeline, srv *githubtest.Server, at time.Time, o options) (tickFigures, error) {
	t, err := measureTick(ctx, p.config, srv, at, profileIn(o.profiles, "tick-"+strings.ReplaceAll(label, " ", "-")))
	if err != nil {
		return t, err
	}
	if t.Due != o.issues {
		return t, fmt.Errorf("%s tick: %d issues were due, not all %d", label, t.Due, o.issues)
	}
	fmt.Printf("  %s: %d issues, wall %s (fetching PR state %s), process CPU %s; allocated %s, heap after %s, live at most %s, from the OS %s, %d GCs; peak RSS %s\n",
		label, t.Due, secs(t.Wall), secs(t.Fetch), secs(t.CPU), mib(t.TotalAlloc), mib(t.HeapAlloc), mib(t.Live), mib(t.Sys), t.NumGC, mib(t.RSSKiB<<10))
	fmt.Printf("    requests: %d (%s)\n", total(t.Counts), report.Kinds(t.Counts))
	return t, nil
}

// printSteady runs the steady state and prints it; it returns the
// requests per watched PR per hour.
func printSteady(ctx context.Context, o options, p *pipeline, srv *githubtest.Server, clk *fixture.Clock) (float64, error) {
	measured := time.Duration(o.hours * float64(time.Hour))
	fmt.Printf("\nsteady state: a tick every %s of the controller's clock; %s warm-up, %s measured; the issues' files watched: %t\n", o.step, o.warmup, measured, o.issueWatch)
	s := &steadyRun{c: &controller.Controller{Load: p.load, Now: clk.Now, BoundMemory: true}, clock: clk, step: o.step, srv: srv, profile: profileIn(o.profiles, "steady"),
		progress: func(hour int, warm bool, t tickTotals) {
			label := "measured"
			if warm {
				label = "warm-up"
			}
			fmt.Printf("  hour %d (%s): %d ticks, %d issue passes, %s of wall time\n", hour, label, t.n, t.passes, secs(t.wall))
		}}
	if o.issueWatch {
		defer s.c.WatchIssues(ctx)()
	}
	f, err := s.run(ctx, o.warmup, measured)
	if err != nil {
		return 0, err
	}
	perHour := f.perPRHour(o.issues)
	fmt.Printf("  requests: %d in %.2f h over %d PRs = %.3f per watched PR per hour (target ≤ %.0f: %s)\n",
		f.total, f.hours, o.issues, perHour, targetPerPRHour, report.Verdict(perHour <= targetPerPRHour))
	fmt.Printf("    by kind: %s\n", report.Kinds(f.counts))
	fmt.Printf("  ticks with issues due: %d, %.0f issues each, %s each (slowest %s)\n",
		f.busy.n, float64(f.busy.passes)/float64(max(f.busy.n, 1)), secs(f.busy.mean()), secs(f.busy.slowest))
	fmt.Printf("  ticks with nothing due: %d, %s each (slowest %s); of them %d at least %s of the wall clock after the last tick with issues due (every file settled): %s each, median %s (slowest %s)\n",
		f.idle.n, secs(f.idle.mean()), secs(f.idle.slowest), f.settled.n, scancache.SettleTime, ms(f.settled.mean()), ms(f.settled.median()), ms(f.settled.slowest))
	return perHour, nil
}

// printPollEach prints what polling each PR with its own requests every
// 60 s would cost, next to the controller's perHour.
func printPollEach(ctx context.Context, o options, f forge.Forge, prs []waiting, srv *githubtest.Server, perHour float64) error {
	round, err := pollEach(ctx, f, prs, o.workers, srv)
	if err != nil {
		return err
	}
	perPR := float64(total(round)) / float64(len(prs))
	fmt.Printf("  polling each PR with its own requests every 60 s instead (forge.PR + forge.Checks): %.1f requests a round per PR = %.0f per PR per hour, %.0f× the controller's\n",
		perPR, perPR*60, perPR*60/max(perHour, 1e-9))
	fmt.Printf("    one round by kind: %s\n", report.Kinds(round))
	return nil
}

// profileIn is the prefix of profiles named name in dir; empty when
// profiles are not asked for.
func profileIn(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}
