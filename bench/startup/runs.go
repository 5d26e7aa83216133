package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"time"

	"github.com/agenttree/agenttree/bench/internal/fixture"
)

// sample is one run of a process: wall time from start to reaping it.
// (Its peak RSS is not: Linux counts the parent's, which holds the
// fixture, in a child's until it execs; bench/next measures memory.)
type sample struct {
	wall time.Duration
}

// command is one process the benchmark times, again and again.
type command struct {
	label string
	bin   string
	args  []string
	dir   string
	// reset puts the state back before a run; check makes sure the run
	// did what it should. Neither is timed.
	reset, check func() error
	samples      []sample
}

// once runs c, timed from exec.Cmd.Start to Wait returning: the whole
// process, as a shell or an agent pays for it.
func (c *command) once(env []string, devnull *os.File) (sample, error) {
	if c.reset != nil {
		if err := c.reset(); err != nil {
			return sample{}, err
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command(c.bin, c.args...)
	cmd.Dir, cmd.Env = c.dir, env
	cmd.Stdout, cmd.Stderr = devnull, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %v: %s", c.label, err, stderr.Bytes())
	}
	if c.check != nil {
		if err := c.check(); err != nil {
			return sample{}, fmt.Errorf("%s: %w", c.label, err)
		}
	}
	return sample{wall: wall}, nil
}

// target is one agenttree build's commands.
type target struct {
	label              string
	help, next, status *command
}

func newTarget(ctx context.Context, label, bin, nextRepo, statusRepo string, issues int) (*target, error) {
	n, err := fixture.NewNext(ctx, bin, nextRepo)
	if err != nil {
		return nil, err
	}
	t := &target{
		label: label,
		help:  &command{label: "agenttree --help", bin: bin, args: []string{"--help"}, dir: nextRepo},
		next: &command{label: "agenttree next (two file validators)", bin: bin, args: fixture.NextArgs, dir: nextRepo,
			reset: n.Reset, check: n.CheckMoved},
	}
	if statusRepo == "" {
		return t, nil
	}
	if err := checkStatus(ctx, bin, statusRepo, issues); err != nil {
		return nil, err
	}
	t.status = &command{label: fmt.Sprintf("agenttree status (%d issues)", issues), bin: bin, args: []string{"status"}, dir: statusRepo}
	return t, nil
}

// checkStatus makes sure status reads every issue of the fixture, none
// of them as damaged, before it is timed.
func checkStatus(ctx context.Context, bin, repo string, issues int) error {
	cmd := exec.CommandContext(ctx, bin, "status", "--json")
	cmd.Dir, cmd.Env = repo, fixture.HumanEnv()
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("status --json: %w", err)
	}
	var rows []struct {
		ID    int    `json:"id"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		return fmt.Errorf("status --json: %w", err)
	}
	if len(rows) != issues {
		return fmt.Errorf("status lists %d issues, not %d", len(rows), issues)
	}
	for _, r := range rows {
		if r.Error != "" {
			return fmt.Errorf("status: issue %d: %s", r.ID, r.Error)
		}
	}
	return nil
}

// suite is the empty program and the builds, timed in the same rounds.
type suite struct {
	empty   command
	floors  []*command
	targets []*target
}

// run times rounds rounds after warmup untimed ones. A round runs the
// empty program, the floors and each build's --help and next once, in a
// random order;
// statusRounds of them, evenly spread, run each build's status too.
func (s *suite) run(ctx context.Context, rounds, warmup, statusRounds int) error {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	env := fixture.HumanEnv()
	for i := range warmup + rounds {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped after %d rounds: %w", i, err)
		}
		timed := i >= warmup
		for _, c := range s.round(i-warmup, rounds, statusRounds) {
			smp, err := c.once(env, devnull)
			if err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
			if timed {
				c.samples = append(c.samples, smp)
			}
		}
	}
	return nil
}

// round is the commands of round i (negative: a warm-up round), shuffled.
func (s *suite) round(i, rounds, statusRounds int) []*command {
	cmds := append([]*command{&s.empty}, s.floors...)
	withStatus := statusRounds > 0 && (i == -1 || i >= 0 && i%(rounds/statusRounds) == 0 && i/(rounds/statusRounds) < statusRounds)
	for _, t := range s.targets {
		cmds = append(cmds, t.help, t.next)
		if withStatus && t.status != nil {
			cmds = append(cmds, t.status)
		}
	}
	rand.Shuffle(len(cmds), func(a, b int) { cmds[a], cmds[b] = cmds[b], cmds[a] })
	return cmds
}
