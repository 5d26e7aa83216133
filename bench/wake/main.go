// Command wake measures how long after the local forge's CI turns red the
// step back's message shows in the agent's tmux pane, with the controller
// woken by the forge's watch and with the watch off (poll only), side by
// side in one run (docs/ARCHITECTURE.md §6; how to run it: bench/README.md).
//
// This program is also the local forge's CI runner: the forge starts its
// own executable again to run CI.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/agenttree/agenttree/bench/internal/report"
	"github.com/agenttree/agenttree/forge/local/localtest"
)

// targetWake is the target for the p95 with wake-ups.
const targetWake = time.Second

type options struct {
	runs    int
	poll    time.Duration
	gap     time.Duration
	ciUpTo  time.Duration
	keep    bool
	modes   []mode
	verbose bool
}

func main() {
	localtest.RunnerMain()
	var o options
	flag.IntVar(&o.runs, "runs", 20, "CI red → pane runs of each mode")
	flag.DurationVar(&o.poll, "poll", 30*time.Second, "ci_polling's poll_interval_s (and min_interval_s) of both modes, whole seconds (30 s is the default config's)")
	flag.DurationVar(&o.gap, "gap", 1500*time.Millisecond, "time between the starts of two runs; a run does not wait for the one before")
	flag.DurationVar(&o.ciUpTo, "ci", 3*time.Second, "each run's CI lasts a random time up to this, then fails")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp directory (repositories, controller logs) and print its path")
	only := flag.String("mode", "", "run one mode only: wake or poll")
	flag.Parse()
	for _, m := range []mode{modeWake, modePoll} {
		if *only == "" || *only == string(m) {
			o.modes = append(o.modes, m)
		}
	}
	if len(o.modes) == 0 || o.runs < 1 || o.poll < time.Second || o.poll%time.Second != 0 || o.ciUpTo < 100*time.Millisecond {
		fmt.Fprintln(os.Stderr, "wake: -mode is wake or poll; -runs at least 1; -poll whole seconds, at least 1s; -ci at least 100ms")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := bench(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "wake:", err)
		os.Exit(1)
	}
}

func bench(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "agenttree-bench-wake-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("temp directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	fmt.Printf("CI red → step back's message in the agent's tmux pane, local forge, %d runs a mode started %s apart,\n", o.runs, o.gap)
	fmt.Printf("CI failing after a random 0–%s, ci_polling every %s, controller.interval_s 1; %s\n", o.ciUpTo, o.poll, report.Machine())
	results := map[mode][]time.Duration{}
	var errs []error
	for _, m := range o.modes {
		lat, err := runMode(ctx, o, dir, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m, err))
			continue
		}
		slices.Sort(lat)
		results[m] = lat
	}
	fmt.Printf("\n%-32s %9s %9s %9s %9s\n", "", "p50", "p95", "min", "max")
	for _, m := range o.modes {
		lat := results[m]
		if len(lat) == 0 {
			continue
		}
		fmt.Printf("%-32s %9s %9s %9s %9s\n", m.title(), secs(report.Percentile(lat, 50)), secs(report.Percentile(lat, 95)), secs(lat[0]), secs(lat[len(lat)-1]))
	}
	if lat := results[modeWake]; len(lat) > 0 {
		p95 := report.Percentile(lat, 95)
		fmt.Printf("\ntarget with wake-ups: p95 ≤ %s: %s\n", targetWake, report.Verdict(p95 <= targetWake))
	}
	if lat := results[modePoll]; len(lat) > 0 {
		bound := o.poll + time.Second
		fmt.Printf("target poll only: p95 ≤ one poll interval + 1 s (%s): %s\n", bound, report.Verdict(report.Percentile(lat, 95) <= bound))
	}
	return errors.Join(errs...)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
