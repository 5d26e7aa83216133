// Command next measures one whole `agenttree next` process: the wall time
// from starting it to reaping it, and its peak resident memory, over many
// runs of a move through two file gates.
//
//	go run ./bench/next [-n 200] [-warmup 5] [-keep]
//
// See bench/README.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenttree/agenttree/bench/internal/fixture"
	"github.com/agenttree/agenttree/bench/internal/report"
	"github.com/agenttree/agenttree/internal/proc"
)

// Targets the figures are compared against.
const (
	targetMedian = 15 * time.Millisecond
	targetRSSMiB = 30.0
)

func main() {
	n := flag.Int("n", 200, "timed runs")
	warmup := flag.Int("warmup", 5, "untimed runs before the timed ones")
	keep := flag.Bool("keep", false, "keep the temp directory and print its path")
	bin := flag.String("bin", "", "time this agenttree binary instead of building one from the module (to compare two builds side by side)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := bench(ctx, *n, *warmup, *keep, *bin)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type sample struct {
	wall   time.Duration
	rssKiB int64
}

func bench(ctx context.Context, n, warmup int, keep bool, bin string) error {
	if n < 1 {
		return fmt.Errorf("-n must be at least 1")
	}
	tmp, err := os.MkdirTemp("", "agenttree-bench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("temp dir:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	if bin == "" {
		if bin, err = (fixture.Build{}).CLI(ctx, tmp); err != nil {
			return err
		}
	}
	repo, err := fixture.NewNext(ctx, bin, filepath.Join(tmp, "repo"))
	if err != nil {
		return err
	}
	samples, err := timeRuns(ctx, bin, repo, n, warmup)
	if err != nil {
		return err
	}
	printFigures(samples)
	return nil
}

// timeRuns times n runs of `agenttree next` in repo after warmup untimed
// ones, putting issue 1 back at stage a before each. It stops between runs
// once ctx is done; a run itself is started without ctx, so that nothing
// but the process is timed.
func timeRuns(ctx context.Context, bin string, repo *fixture.Next, n, warmup int) ([]sample, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	env := fixture.HumanEnv()

	samples := make([]sample, 0, n)
	for i := range warmup + n {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stopped after %d runs: %w", i, err)
		}
		// Put the issue back at a, outside the timed part.
		if err := repo.Reset(); err != nil {
			return nil, err
		}
		s, err := timeNext(bin, repo.Repo, env, devnull)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
		if err := repo.CheckMoved(); err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
		if i >= warmup {
			samples = append(samples, s)
		}
	}
	return samples, nil
}

// timeNext runs `agenttree next` once in repo, from starting the process
// to reaping it.
func timeNext(bin, repo string, env []string, stdout *os.File) (sample, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(bin, fixture.NextArgs...)
	cmd.Dir, cmd.Env = repo, env
	cmd.Stdout, cmd.Stderr = stdout, &stderr

	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("agenttree next: %v: %s", err, stderr.Bytes())
	}
	return sample{wall: wall, rssKiB: proc.PeakRSSKiB(cmd.ProcessState)}, nil
}

func printFigures(samples []sample) {
	walls := make([]time.Duration, len(samples))
	rss := make([]int64, len(samples))
	for i, s := range samples {
		walls[i], rss[i] = s.wall, s.rssKiB
	}
	slices.Sort(walls)
	slices.Sort(rss)
	median := report.Percentile(walls, 50)
	maxRSS := float64(rss[len(rss)-1]) / 1024

	fmt.Printf("agenttree next: %d runs (stage a -> b through file_exists + section_check)\n", len(samples))
	fmt.Printf("machine: %s\n", report.Machine())
	fmt.Printf("wall time  median %s  p90 %s  min %s  max %s\n",
		report.Ms(median), report.Ms(report.Percentile(walls, 90)), report.Ms(walls[0]), report.Ms(walls[len(walls)-1]))
	fmt.Printf("peak RSS   max %.1f MiB  median %.1f MiB\n", maxRSS, float64(report.Percentile(rss, 50))/1024)
	fmt.Printf("targets    median < %s: %s   peak RSS < %.0f MiB: %s\n",
		report.Ms(targetMedian), report.Verdict(median < targetMedian), targetRSSMiB, report.Verdict(maxRSS < targetRSSMiB))
}
