// Command controller measures the host controller (package controller)
// against the fake GitHub server with a network's latency: the GitHub
// requests it spends per watched PR per hour at steady state, next to what
// polling each PR with its own requests would; the time and memory of one
// tick with every issue due; and, in each events mode (poll, webhook,
// gh-forward) side by side, the requests per watched PR-hour with the
// controller's Run and how soon after CI turns red the agent's tmux pane
// shows the message.
//
//	go run ./bench/controller [-issues 1000] [-latency 50ms] [-hours 0.5] [-warmup 30m] [-runs 20] [-events poll,webhook,gh-forward]
//
// See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenttree/agenttree/bench/internal/ghevents"
	"github.com/agenttree/agenttree/bench/internal/report"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// options are the benchmark's flags.
type options struct {
	issues  int
	latency time.Duration
	// hours is the simulated time measured at steady state, after warmup.
	hours  float64
	warmup time.Duration
	step   time.Duration
	// workers poll the PRs one by one for the comparison.
	workers int
	runs    int
	poll    time.Duration
	keep    bool
	// profiles is the directory profiles go to; empty: none.
	profiles string
	// modes are the events modes compared; eventsStep and eventsTick are
	// the controller's clock and the wall clock between two ticks of
	// their steady state; eventsOnly skips the parts before them.
	modes                  []ghevents.Mode
	eventsStep, eventsTick time.Duration
	eventsOnly             bool
	// issueWatch: the steady state watches the issues' files as
	// `agenttree controller` does (controller.WatchIssues).
	issueWatch bool
}

func main() {
	ghevents.Main()
	var o options
	flag.IntVar(&o.issues, "issues", 1000, "issues waiting on CI, each with an open PR")
	flag.DurationVar(&o.latency, "latency", 50*time.Millisecond, "how long the fake GitHub holds each request")
	flag.Float64Var(&o.hours, "hours", 0.5, "simulated hours measured at steady state")
	flag.DurationVar(&o.warmup, "warmup", 30*time.Minute, "simulated time before the steady state is measured (the default ci_polling reaches its 300 s ceiling after 27.5 minutes)")
	flag.DurationVar(&o.step, "step", 10*time.Second, "simulated time between ticks (the default controller.interval_s)")
	flag.IntVar(&o.workers, "workers", 32, "concurrent requests of the one-round-per-PR comparison")
	flag.IntVar(&o.runs, "runs", 20, "CI red → pane runs (0: none)")
	flag.DurationVar(&o.poll, "poll", 2*time.Second, "CI poll interval of the pane runs (whole seconds)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp directory and print its path")
	modes := flag.String("events", "poll,webhook,gh-forward", "events.mode values compared side by side (requests per PR-hour, CI red → pane); empty: none")
	flag.DurationVar(&o.eventsStep, "events-step", 30*time.Second, "controller's clock between two ticks of the events modes' steady state")
	flag.DurationVar(&o.eventsTick, "events-tick", 250*time.Millisecond, "wall clock between two ticks of the events modes' steady state (controller.Controller.Interval)")
	flag.BoolVar(&o.eventsOnly, "events-only", false, "measure only the events modes side by side (skip the tick and the per-tick steady state)")
	flag.BoolVar(&o.issueWatch, "issue-watch", true, "the steady state watches the issues' files, as `agenttree controller` does; false: each tick stats every issue's files, as before the watch")
	flag.StringVar(&o.profiles, "profile", "", "write CPU and allocation profiles of the measured steady state and of the ticks into this directory (go tool pprof)")
	// The tick is measured in a process of its own: this program, run
	// with these flags.
	tickConfig := flag.String(flagTick, "", "run one tick over this config and print its figures (the benchmark runs itself so)")
	tickGitHub := flag.String(flagGitHub, "", "the GitHub API URL of -"+flagTick)
	tickRepo := flag.String(flagRepo, "", "the repository (owner/name) of -"+flagTick)
	tickAt := flag.String(flagAt, "", "the controller's clock (RFC 3339) of -"+flagTick)
	tickProfile := flag.String(flagProfile, "", "write the profiles of -"+flagTick+" to this prefix (.cpu, .allocs)")
	flag.Parse()
	var err error
	if o.modes, err = ghevents.ParseModes(*modes); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	if *tickConfig != "" {
		err = tickProcess(ctx, *tickConfig, *tickGitHub, *tickRepo, *tickAt, *tickProfile)
	} else {
		err = bench(ctx, o)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func tickProcess(ctx context.Context, config, url, repo, at, profile string) error {
	when, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return fmt.Errorf("-%s: %w", flagAt, err)
	}
	return runTick(ctx, config, url, repo, when, profile)
}

func (o options) check() error {
	switch {
	case o.issues < 1:
		return errors.New("-issues must be at least 1")
	case o.hours <= 0 || o.step <= 0 || o.warmup < 0:
		return errors.New("-hours and -step must be positive, -warmup not negative")
	case o.workers < 1:
		return errors.New("-workers must be at least 1")
	case o.runs > 0 && o.poll < time.Second:
		return errors.New("-poll must be at least 1s")
	case o.eventsStep < time.Second || o.eventsTick < 50*time.Millisecond:
		return errors.New("-events-step must be at least 1s, -events-tick at least 50ms")
	}
	return nil
}

func bench(ctx context.Context, o options) error {
	if err := o.check(); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "agenttree-bench-controller-")
	if err != nil {
		return err
	}
	if o.profiles != "" {
		if err := os.MkdirAll(o.profiles, 0o755); err != nil {
			return err
		}
	}
	if o.keep {
		fmt.Println("temp dir:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	return withGitHub(o.latency, func(srv *githubtest.Server) error {
		f, err := newGitHubForge(ctx, srv.URL, fakeRepo(srv), srv.Token)
		if err != nil {
			return err
		}
		fmt.Printf("agenttree controller: %d issues waiting on CI, the fake GitHub %s away\n", o.issues, o.latency)
		fmt.Printf("machine: %s\n", report.Machine())
		var met []bool
		if !o.eventsOnly {
			ok, err := benchWatching(ctx, o, filepath.Join(tmp, "steady"), srv, f)
			met = append(met, ok...)
			if err != nil {
				return err
			}
		}
		if len(o.modes) > 0 {
			ok, err := benchEventsSteady(ctx, o, filepath.Join(tmp, "events"), srv)
			met = append(met, ok...)
			if err != nil {
				return err
			}
		}
		if o.runs > 0 {
			ok, err := benchPane(ctx, o, filepath.Join(tmp, "pane"), srv)
			if err != nil {
				return err
			}
			met = append(met, ok...)
		}
		if slices.Contains(met, false) {
			fmt.Println("\nsome targets were MISSED; bench/README.md says how to find where the time and the requests go")
		}
		return nil
	})
}
