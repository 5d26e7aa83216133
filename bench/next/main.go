// Command next measures one whole `agenttree next` process: the wall time
// from starting it to reaping it, and its peak resident memory, over many
// runs of a move through two file gates. -against times a second build
// (an older commit) in the same rounds, alternating, and prints the ratio.
//
//	go run ./bench/next [-n 200] [-warmup 5] [-bin PATH] [-against PATH] [-keep]
//
// See bench/README.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
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
	n := flag.Int("n", 200, "timed runs (of each build)")
	warmup := flag.Int("warmup", 5, "untimed runs before the timed ones")
	keep := flag.Bool("keep", false, "keep the temp directory and print its path")
	bin := flag.String("bin", "", "time this agenttree binary instead of building one from the module")
	against := flag.String("against", "", "also time this agenttree binary (an older build) in the same rounds, alternating with the first, and print the ratio of the medians")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := bench(ctx, *n, *warmup, *keep, *bin, *against)
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

// build is one binary under test, with a repository of its own: each
// build makes its issue with its own `issue create`, so an older build
// reads a state directory it wrote itself.
type build struct {
	name, bin string
	repo      *fixture.Next
	samples   []sample
}

func bench(ctx context.Context, n, warmup int, keep bool, bin, against string) error {
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
	builds := []*build{{name: "this build", bin: bin}}
	if against != "" {
		builds = append(builds, &build{name: "against", bin: against})
	}
	for i, b := range builds {
		if b.repo, err = fixture.NewNext(ctx, b.bin, filepath.Join(tmp, fmt.Sprintf("repo-%d", i))); err != nil {
			return fmt.Errorf("%s (%s): %w", b.name, b.bin, err)
		}
	}
	if err := timeRuns(ctx, builds, n, warmup); err != nil {
		return err
	}
	fmt.Printf("agenttree next: %d runs of each build (stage a -> b through file_exists + section_check)\n", n)
	fmt.Printf("machine: %s\n", report.Machine())
	for _, b := range builds {
		printFigures(b)
	}
	if len(builds) == 2 {
		this, old := median(builds[0].samples), median(builds[1].samples)
		fmt.Printf("ratio      this build / against: median %.3f×  (%s / %s)\n",
			float64(this)/float64(old), report.Ms(this), report.Ms(old))
	}
	return nil
}

// timeRuns times n rounds after warmup untimed ones. Each round runs every
// build once, in a random order, so the machine's noise falls on all of
// them alike; each run starts with its issue put back at stage a. It stops
// between runs once ctx is done; a run itself is started without ctx, so
// that nothing but the process is timed.
func timeRuns(ctx context.Context, builds []*build, n, warmup int) error {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	env := fixture.HumanEnv()

	order := slices.Clone(builds)
	for i := range warmup + n {
		rand.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, b := range order {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("stopped after %d rounds: %w", i, err)
			}
			// Put the issue back at a, outside the timed part.
			if err := b.repo.Reset(); err != nil {
				return err
			}
			s, err := timeNext(b.bin, b.repo.Repo, env, devnull)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", b.name, i, err)
			}
			if err := b.repo.CheckMoved(); err != nil {
				return fmt.Errorf("%s, run %d: %w", b.name, i, err)
			}
			if i >= warmup {
				b.samples = append(b.samples, s)
			}
		}
	}
	return nil
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

func median(samples []sample) time.Duration {
	walls := make([]time.Duration, len(samples))
	for i, s := range samples {
		walls[i] = s.wall
	}
	slices.Sort(walls)
	return report.Percentile(walls, 50)
}

func printFigures(b *build) {
	walls := make([]time.Duration, len(b.samples))
	rss := make([]int64, len(b.samples))
	for i, s := range b.samples {
		walls[i], rss[i] = s.wall, s.rssKiB
	}
	slices.Sort(walls)
	slices.Sort(rss)
	median := report.Percentile(walls, 50)
	maxRSS := float64(rss[len(rss)-1]) / 1024

	fmt.Printf("%s: %s\n", b.name, b.bin)
	fmt.Printf("  wall time  median %s  p90 %s  min %s  max %s\n",
		report.Ms(median), report.Ms(report.Percentile(walls, 90)), report.Ms(walls[0]), report.Ms(walls[len(walls)-1]))
	fmt.Printf("  peak RSS   max %.1f MiB  median %.1f MiB\n", maxRSS, float64(report.Percentile(rss, 50))/1024)
	fmt.Printf("  targets    median < %s: %s   peak RSS < %.0f MiB: %s\n",
		report.Ms(targetMedian), report.Verdict(median < targetMedian), targetRSSMiB, report.Verdict(maxRSS < targetRSSMiB))
}
