package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/bench/internal/ghevents"
	"github.com/agenttree/agenttree/bench/internal/report"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/controller/wake"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/watch"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/sessions/tmux/tmuxtest"
)

// Bounds of the pane runs' waits. They are far above what a run takes and
// are reached only when something is broken.
const (
	firstPollWithin = 30 * time.Second
	arriveWithin    = 30 * time.Second
	lookEvery       = 20 * time.Millisecond
)

// tmuxServer is a tmux server of the benchmark's own (tmuxtest.Start).
type tmuxServer struct {
	*tmux.Client
	p *tmuxtest.Private
}

func startTmux(ctx context.Context) (*tmuxServer, error) {
	p, err := tmuxtest.Start(ctx, "agenttree-bench-tmux-")
	if err != nil {
		return nil, err
	}
	return &tmuxServer{Client: &tmux.Client{Socket: p.Socket, LockDir: p.Dir}, p: p}, nil
}

// stop ends the server and removes its directory.
func (s *tmuxServer) stop() { s.p.Stop() }

// paneRun is one issue of the pane runs: waiting on CI, its agent's
// session running cat, which shows what is typed into it.
type paneRun struct {
	waiting
	session string
}

// paneLatencies measures, runs times, how long after its CI turns red an
// issue's step-back message shows in its agent's pane, with the
// controller running on the wall clock as `agenttree controller` does
// (its log goes to controller.log beside the config) and the forge of
// events mode m. Every issue waits on CI from the start, so each run's
// failure lands at a random point of its polling, as a real one does.
// With events on, a run starts once the watch is healthy and its PR's
// poll was stretched (wake.HealthyPoll): what it measures is the event's
// path, not a poll that happened to come first.
func paneLatencies(ctx context.Context, p *pipeline, mf ghevents.Forge, srv *githubtest.Server, tm *tmuxServer, runs int, poll time.Duration) ([]time.Duration, error) {
	all := make([]paneRun, runs)
	for i := range all {
		r, err := startPaneRun(ctx, p, tm, fmt.Sprintf("Pane run %d", i+1))
		if err != nil {
			return nil, err
		}
		all[i] = r
	}
	logPath := filepath.Join(filepath.Dir(p.config), "controller.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	c := &controller.Controller{Load: p.load, Log: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))}

	// A controller that stops ends the runs, with its error.
	runCtx, stop := context.WithCancel(ctx)
	var runErr error
	stopped := make(chan struct{})
	go func() {
		runErr = c.Run(runCtx)
		stop()
		close(stopped)
	}()
	latencies, err := func() ([]time.Duration, error) {
		if err := mf.WaitHealthy(runCtx, firstPollWithin); err != nil {
			return nil, err
		}
		return measureRuns(runCtx, p.eng, srv, tm, all, poll, mf.Watching != nil)
	}()
	if err != nil {
		err = fmt.Errorf("%w (the controller's log: %s; -keep keeps it)", err, logPath)
	}
	stop()
	<-stopped
	return latencies, errors.Join(err, runErr)
}

// startPaneRun places an issue waiting on CI and starts its agent's
// session.
func startPaneRun(ctx context.Context, p *pipeline, tm *tmuxServer, title string) (paneRun, error) {
	w, err := p.addWaiting(ctx, title)
	if err != nil {
		return paneRun{}, err
	}
	iss, err := p.eng.Store.Get(w.id)
	if err != nil {
		return paneRun{}, err
	}
	r := paneRun{waiting: w, session: delivery.SessionName(p.eng.Config, iss)}
	return r, tm.NewSession(ctx, r.session, tm.p.Dir, "cat")
}

// measureRuns makes the runs one after another.
func measureRuns(ctx context.Context, e *engine.Engine, srv *githubtest.Server, tm *tmuxServer, runs []paneRun, poll time.Duration, stretched bool) ([]time.Duration, error) {
	latencies := make([]time.Duration, 0, len(runs))
	for _, r := range runs {
		d, err := paneLatency(ctx, e, srv, tm, r, poll, stretched)
		if err != nil {
			return latencies, err
		}
		latencies = append(latencies, d)
	}
	return latencies, nil
}

// paneLatency is one run: once the controller has polled r's CI (and,
// when stretched, put its next poll off for the healthy watch), and a
// random part of a poll interval later, r's check run fails; it returns
// how long until the pane shows the message.
func paneLatency(ctx context.Context, e *engine.Engine, srv *githubtest.Server, tm *tmuxServer, r paneRun, poll time.Duration, stretched bool) (time.Duration, error) {
	polled := func() (bool, error) {
		w, err := e.Store.ReadWatch(r.id)
		if err != nil || w.Poll == nil || w.Poll.Iteration == 0 {
			return false, err
		}
		return !stretched || time.Until(w.Poll.NextAt) > wake.HealthyPoll/2, nil
	}
	if err := waitUntil(ctx, firstPollWithin, polled); err != nil {
		return 0, fmt.Errorf("issue %d: the controller never polled its CI: %w", r.id, err)
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(rand.N(poll)):
	}
	t0 := time.Now()
	srv.CompleteCheckRun(r.check, "failure")
	want := fmt.Sprintf("issue %d was stepped back", r.id)
	shown := func() (bool, error) {
		screen, err := tm.Capture(ctx, r.session, 200)
		return strings.Contains(screen, want), err
	}
	if err := waitUntil(ctx, arriveWithin, shown); err != nil {
		return 0, fmt.Errorf("issue %d: %q never showed in tmux session %s: %w", r.id, want, r.session, err)
	}
	return time.Since(t0), nil
}

// waitUntil asks cond every lookEvery until it holds, it fails, or
// within has passed.
func waitUntil(ctx context.Context, within time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	look := time.NewTicker(lookEvery)
	defer look.Stop()
	for {
		ok, err := cond()
		switch {
		case ok:
			return nil
		case err != nil && !errors.Is(err, tmux.ErrNoSession):
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", within, ctx.Err())
		case <-look.C:
		}
	}
}

// benchPane measures CI red → message in the pane in each events mode,
// one after another on the same fake, and returns whether each mode's
// target was met.
func benchPane(ctx context.Context, o options, dir string, srv *githubtest.Server) ([]bool, error) {
	tick := time.Second
	fmt.Printf("\nCI red → message in the agent's tmux pane: %d runs a mode, ci_polling every %s, controller.interval_s %s, the controller on the wall clock\n",
		o.runs, o.poll, tick)
	if _, err := exec.LookPath("tmux"); err != nil {
		fmt.Printf("  skipped: %v\n", err)
		return nil, nil
	}
	var met []bool
	for _, m := range o.modes {
		lat, err := paneMode(ctx, o, filepath.Join(dir, string(m)), srv, m, tick)
		if err != nil {
			return met, fmt.Errorf("events.mode %s: %w", m, err)
		}
		slices.Sort(lat)
		p95, bound := report.Percentile(lat, 95), o.poll+targetPaneSlack
		what := "one poll interval + " + targetPaneSlack.String()
		if m != watch.ModePoll {
			bound, what = targetPaneEvents, "with events"
		}
		fmt.Printf("  %-10s  p50 %s  p95 %s  min %s  max %s   target p95 ≤ %s (%s): %s\n", m, secs(report.Percentile(lat, 50)), secs(p95),
			secs(lat[0]), secs(lat[len(lat)-1]), secs(bound), what, report.Verdict(p95 <= bound))
		met = append(met, p95 <= bound)
	}
	return met, nil
}

// paneMode is the pane runs of one events mode: its own forge, state
// directory and tmux server.
func paneMode(ctx context.Context, o options, dir string, srv *githubtest.Server, m ghevents.Mode, tick time.Duration) ([]time.Duration, error) {
	defer ghevents.DropHooks(srv)
	mf, err := ghevents.Open(ctx, m, srv, dir, 0)
	if err != nil {
		return nil, err
	}
	tm, err := startTmux(ctx)
	if err != nil {
		return nil, err
	}
	defer tm.stop()
	p, err := newPipeline(dir, settings{poll: o.poll, tick: tick, socket: tm.Socket}, srv, mf.Forge)
	if err != nil {
		return nil, err
	}
	return paneLatencies(ctx, p, mf, srv, tm, o.runs, o.poll)
}
