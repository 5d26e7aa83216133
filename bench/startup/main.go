// Command startup times whole agenttree processes against an empty Go
// program, side by side in one run: `--help`, `next` through two file
// validators, and `status` over 10,000 issues. Each round runs every
// command once, in a random order, so the machine's noise falls on all
// of them alike; -against times a second build (an older commit) in the
// same rounds.
//
//	go run ./bench/startup [-n 200] [-status-n 20] [-issues 10000] [-against PATH] [-static] [-floors] [-python PATH]
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

	"github.com/agenttree/agenttree/bench/internal/fixture"
)

type options struct {
	rounds, warmup, statusRounds, issues int
	bin, against, python                 string
	keep, static, floors                 bool
}

func main() {
	var o options
	flag.IntVar(&o.rounds, "n", 200, "timed rounds of the empty program, --help and next")
	flag.IntVar(&o.warmup, "warmup", 5, "untimed rounds before the timed ones")
	flag.IntVar(&o.statusRounds, "status-n", 20, "timed rounds of status, spread over the others (0: no status)")
	flag.IntVar(&o.issues, "issues", 10000, "issues status lists")
	flag.StringVar(&o.bin, "bin", "", "time this agenttree binary instead of building one from the module")
	flag.StringVar(&o.against, "against", "", "also time this agenttree binary (an older build) in the same rounds")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp directory and print its path")
	flag.BoolVar(&o.static, "static", false, "build agenttree and the floors with CGO_ENABLED=0 (static, as the README installs it)")
	flag.BoolVar(&o.floors, "floors", false, "also time the floor programs of bench/floors (--help): what agenttree's shape costs before its own work")
	flag.StringVar(&o.python, "python", "", "also time this Python interpreter alone and importing click and yaml: the least any Python CLI built on them (the earlier agenttree) pays to start")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := bench(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func bench(ctx context.Context, o options) error {
	if o.rounds < 1 || o.statusRounds < 0 || o.statusRounds > o.rounds || o.issues < 1 {
		return errors.New("-n must be at least 1, -status-n between 0 and -n, -issues at least 1")
	}
	tmp, err := os.MkdirTemp("", "agenttree-startup-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("temp dir:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	build := fixture.Build{Static: o.static}
	if o.bin == "" {
		if o.bin, err = build.CLI(ctx, tmp); err != nil {
			return err
		}
	}
	empty, err := build.Empty(ctx, tmp)
	if err != nil {
		return err
	}
	var floors []*command
	for _, name := range fixture.Floors {
		if !o.floors {
			break
		}
		bin, err := build.Floor(ctx, tmp, name)
		if err != nil {
			return err
		}
		floors = append(floors, &command{label: "floor: " + name + " --help", bin: bin, args: []string{"--help"}, dir: tmp})
	}
	if o.python != "" {
		floors = append(floors,
			&command{label: "python: interpreter alone", bin: o.python, args: []string{"-c", "pass"}, dir: tmp},
			&command{label: "python: import click, yaml", bin: o.python, args: []string{"-c", "import click, yaml"}, dir: tmp})
	}
	statusRepo := ""
	if o.statusRounds > 0 {
		statusRepo = filepath.Join(tmp, "status")
		fmt.Printf("making %d issues through the store...\n", o.issues)
		if err := fixture.NewStatus(ctx, statusRepo, o.issues); err != nil {
			return fmt.Errorf("status fixture: %w", err)
		}
	}
	builds := []struct{ label, bin string }{{"this build", o.bin}, {"against", o.against}}
	s := &suite{empty: command{label: "empty Go program", bin: empty}, floors: floors}
	for i, b := range builds {
		if b.bin == "" {
			continue
		}
		repo, err := statusCopy(statusRepo, i)
		if err != nil {
			return fmt.Errorf("%s: status fixture: %w", b.label, err)
		}
		t, err := newTarget(ctx, b.label, b.bin, filepath.Join(tmp, fmt.Sprintf("next-%d", i)), repo, o.issues)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", b.label, b.bin, err)
		}
		s.targets = append(s.targets, t)
	}
	if err := s.run(ctx, o.rounds, o.warmup, o.statusRounds); err != nil {
		return err
	}
	s.print(os.Stdout, o)
	return nil
}

// statusCopy is build i's own copy of the status repository: each build
// keeps its scan cache there, and two builds whose caches differ in
// format would otherwise throw each other's away on every run.
func statusCopy(repo string, i int) (string, error) {
	if repo == "" {
		return "", nil
	}
	own := fmt.Sprintf("%s-%d", repo, i)
	return own, os.CopyFS(own, os.DirFS(repo))
}
