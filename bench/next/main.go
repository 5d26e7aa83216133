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
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/internal/statedir"
	"gopkg.in/yaml.v3"
)

// config: stage a is guarded by two file validators that pass; b follows.
const config = `project: bench
stages:
  - name: a
    pre_completion:
      - file_exists: review.md
      - section_check: {file: review.md, section: Critical Issues, expect: empty}
  - name: b
  - name: done
    terminal: completion
`

const review = `# Review

## Critical Issues

None

## Suggestions

- rename the handler
`

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
		if bin, err = build(ctx, tmp); err != nil {
			return err
		}
	}
	repo := filepath.Join(tmp, "repo")
	if err := setup(ctx, bin, repo); err != nil {
		return err
	}
	samples, err := timeRuns(ctx, bin, repo, n, warmup)
	if err != nil {
		return err
	}
	report(samples)
	return nil
}

// timeRuns times n runs of `agenttree next` in repo after warmup untimed
// ones, putting issue 1 back at stage a before each. It stops between runs
// once ctx is done; a run itself is started without ctx, so that nothing
// but the process is timed.
func timeRuns(ctx context.Context, bin, repo string, n, warmup int) ([]sample, error) {
	layout := statedir.Layout{Root: filepath.Join(repo, "_agenttree")}
	issueDir := layout.Issue(1)
	if _, err := os.Stat(issueDir); err != nil {
		issueDir = layout.Docs(1) // a build from before host/ (-bin)
	}
	saved, err := snapshot(issueDir, "issue.yaml", "events.jsonl")
	if err != nil {
		return nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	env := humanEnv()

	samples := make([]sample, 0, n)
	for i := range warmup + n {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stopped after %d runs: %w", i, err)
		}
		// Put the issue back at a, outside the timed part.
		if err := restore(issueDir, saved); err != nil {
			return nil, err
		}
		s, err := timeNext(bin, repo, env, devnull)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
		if err := checkMoved(filepath.Join(issueDir, "issue.yaml")); err != nil {
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
	cmd := exec.Command(bin, "next", "-i", "1")
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

// snapshot reads the named files in dir, for restore.
func snapshot(dir string, names ...string) (map[string][]byte, error) {
	files := make(map[string][]byte, len(names))
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	return files, nil
}

// restore writes files, read by snapshot, back into dir.
func restore(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// build compiles the CLI from the module this program belongs to.
func build(ctx context.Context, tmp string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run this from inside the agenttree module: go run ./bench/next")
	}
	bin := filepath.Join(tmp, "agenttree")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/agenttree")
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	proc.Group(cmd) // a Ctrl-C ends the compilers go started too
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build: %w", err)
	}
	return bin, nil
}

// setup makes a git repository with the config and one issue at stage a
// whose review.md passes both gates.
func setup(ctx context.Context, bin, repo string) error {
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, ".agenttree.yaml"), []byte(config), 0o644); err != nil {
		return err
	}
	if _, err := exec.LookPath("git"); err == nil {
		if _, err := (&gitx.Repo{Dir: repo}).Run(ctx, "init", "-q", "-b", "main"); err != nil {
			return err
		}
	}
	create := exec.CommandContext(ctx, bin, "issue", "create", "Benchmark the gates", "--stage", "a")
	create.Dir, create.Env = repo, humanEnv()
	proc.Group(create)
	create.WaitDelay = time.Second
	if out, err := create.CombinedOutput(); err != nil {
		return fmt.Errorf("issue create: %v: %s", err, out)
	}
	return os.WriteFile(filepath.Join(repo, "_agenttree", "issues", "001", "review.md"), []byte(review), 0o644)
}

// humanEnv is the environment without AGENTTREE_ variables: a person.
func humanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTTREE_") {
			env = append(env, kv)
		}
	}
	return env
}

// checkMoved makes sure a timed run really advanced the issue to b.
func checkMoved(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var iss issues.Issue
	if err := yaml.Unmarshal(data, &iss); err != nil {
		return fmt.Errorf("issue.yaml: %w", err)
	}
	if iss.Stage != "b" || iss.Version != 2 {
		return fmt.Errorf("the issue did not move to b: stage %s, version %d", iss.Stage, iss.Version)
	}
	return nil
}

func report(samples []sample) {
	walls := make([]time.Duration, len(samples))
	rss := make([]int64, len(samples))
	for i, s := range samples {
		walls[i], rss[i] = s.wall, s.rssKiB
	}
	slices.Sort(walls)
	slices.Sort(rss)
	median := percentile(walls, 50)
	maxRSS := float64(rss[len(rss)-1]) / 1024

	fmt.Printf("agenttree next: %d runs (stage a -> b through file_exists + section_check)\n", len(samples))
	fmt.Printf("machine: nproc %s, %s/%s, %s\n", nproc(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Printf("wall time  median %s  p90 %s  min %s  max %s\n",
		ms(median), ms(percentile(walls, 90)), ms(walls[0]), ms(walls[len(walls)-1]))
	fmt.Printf("peak RSS   max %.1f MiB  median %.1f MiB\n", maxRSS, float64(percentile(rss, 50))/1024)
	fmt.Printf("targets    median < %s: %s   peak RSS < %.0f MiB: %s\n",
		ms(targetMedian), verdict(median < targetMedian), targetRSSMiB, verdict(maxRSS < targetRSSMiB))
}

// percentile is the nearest-rank percentile of sorted values.
func percentile[T any](sorted []T, p int) T {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func nproc() string {
	if out, err := exec.Command("nproc").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return fmt.Sprint(runtime.NumCPU())
}
