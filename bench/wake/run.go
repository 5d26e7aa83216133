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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/sessions/tmux/tmuxtest"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// mode is how the controller learns that CI ended.
type mode string

const (
	modeWake mode = "wake" // the local forge's watch wakes it
	modePoll mode = "poll" // the watch is off: the PR's poll finds it
)

func (m mode) title() string {
	if m == modeWake {
		return "wake-ups (the forge's watch)"
	}
	return "poll only (the watch off)"
}

// lookEvery is how often a run reads what its pane's program received.
const lookEvery = 50 * time.Millisecond

// config is the reference pipeline's controller stage on the local forge;
// CI sleeps the seconds the commit's ci-seconds file names, then fails.
const config = `project: shop
forge: local
ci:
  command: sleep "$(cat ci-seconds)"; false
ci_polling:
  poll_interval_s: %[1]d
  min_interval_s: %[1]d
  max_interval_s: %[2]d
controller:
  interval_s: 1
stages:
  - name: backlog
    parking_lot: true
  - name: implement
  - name: pr_ready
    host: controller
    post_start:
      - create_pr:
      - wait_for_ci: {on_failure: step_back}
    pre_completion:
      - pr_ci_passed:
    on_failure:
      step_back_to: implement
      message: "{{failure_reason}}"
  - name: accepted
    terminal: completion
`

// rig is one mode's repository, engine, tmux server and controller.
type rig struct {
	dir, work string
	e         *engine.Engine
	tm        *tmux.Client
	tmuxSrv   *tmuxtest.Private
}

// runMode makes o.runs runs with the controller in mode m and returns
// each run's latency: from the end of its CI (the runner's result) to the
// message showing in its pane.
func runMode(ctx context.Context, o options, root string, m mode) ([]time.Duration, error) {
	dir := filepath.Join(root, string(m))
	r, err := newRig(ctx, dir, o.poll)
	if err != nil {
		return nil, err
	}
	defer r.stopTmux()
	logPath := filepath.Join(dir, "controller.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	c := &controller.Controller{Load: r.open, Tmux: r.tm, NoWatch: m == modePoll,
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

	fmt.Printf("\n%s: ", m.title())
	lat := make([]time.Duration, o.runs)
	errs := make([]error, o.runs)
	var wg sync.WaitGroup
	for i := range o.runs {
		if i > 0 {
			select {
			case <-runCtx.Done():
			case <-time.After(o.gap):
			}
		}
		if runCtx.Err() != nil {
			break
		}
		ci := time.Duration(rand.N(o.ciUpTo/time.Millisecond)+1) * time.Millisecond
		id, received, sha, err := r.start(runCtx, i, ci)
		if err != nil {
			errs[i] = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat[i], errs[i] = r.measure(runCtx, id, received, sha, o.poll+o.ciUpTo+time.Minute)
			fmt.Print(".")
		}()
	}
	wg.Wait()
	stop()
	<-stopped
	fmt.Println()
	if err := errors.Join(append(errs, runErr)...); err != nil {
		return nil, fmt.Errorf("%w (the controller's log: %s; -keep keeps it)", err, logPath)
	}
	return lat, nil
}

// newRig makes a bare origin and a clone holding the pipeline, and a tmux
// server of its own reading an empty configuration.
func newRig(ctx context.Context, dir string, poll time.Duration) (*rig, error) {
	bare, work := filepath.Join(dir, "origin.git"), filepath.Join(dir, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(config, int(poll/time.Second), max(300, int(poll/time.Second)))
	steps := [][]string{
		{"init", "-q", "--bare", "--initial-branch=main", bare},
		{"clone", "-q", bare, work},
	}
	for _, s := range steps {
		if err := git(ctx, dir, s...); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(work, ".gitignore"), []byte("/_agenttree/\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(work, stages.FileName), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	for _, s := range [][]string{{"checkout", "-q", "-B", "main"}, {"add", "."}, {"commit", "-q", "-m", "the pipeline"}, {"push", "-q", "origin", "main"}} {
		if err := git(ctx, work, s...); err != nil {
			return nil, err
		}
	}
	srv, err := tmuxtest.Start(ctx, "agenttree-wake-tmux-")
	if err != nil {
		return nil, err
	}
	r := &rig{dir: dir, work: work, tmuxSrv: srv, tm: &tmux.Client{Socket: srv.Socket, LockDir: srv.Dir}}
	if r.e, err = r.open(); err != nil {
		r.stopTmux()
		return nil, err
	}
	return r, nil
}

func (r *rig) stopTmux() { r.tmuxSrv.Stop() }

// open opens the engine over the pipeline on the local forge, as the
// controller's process does.
func (r *rig) open() (*engine.Engine, error) {
	reg := builtin.Registry()
	cfg, err := load.File(filepath.Join(r.work, stages.FileName), reg)
	if err != nil {
		return nil, err
	}
	state := filepath.Join(r.work, "_agenttree")
	store, err := issues.Open(state)
	if err != nil {
		return nil, err
	}
	f, err := local.New(context.Background(), local.Options{StateDir: state, RepoDir: r.work, Project: cfg.Project, CICommand: cfg.CI.Command})
	if err != nil {
		return nil, err
	}
	return engine.New(cfg, store, reg, nil, engine.WithForge(f),
		engine.WithGit(func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} })), nil
}

// start is run i: an issue whose branch has a commit whose CI lasts ci,
// its agent's session running paneProgram into received, moved by its
// agent to pr_ready.
func (r *rig) start(ctx context.Context, i int, ci time.Duration) (id int, received, sha string, err error) {
	iss, err := r.e.Create(ctx, engine.NewIssue{Title: fmt.Sprintf("Run %d", i+1), Stage: "implement"})
	if err != nil {
		return 0, "", "", err
	}
	if err := git(ctx, r.work, "checkout", "-q", "-B", iss.Branch, "main"); err != nil {
		return 0, "", "", err
	}
	secs := strconv.FormatFloat(ci.Seconds(), 'f', 3, 64)
	if err := os.WriteFile(filepath.Join(r.work, "ci-seconds"), []byte(secs+"\n"), 0o644); err != nil {
		return 0, "", "", err
	}
	if err := git(ctx, r.work, "add", "ci-seconds"); err != nil {
		return 0, "", "", err
	}
	if err := git(ctx, r.work, "commit", "-q", "-m", "CI of "+secs+" s"); err != nil {
		return 0, "", "", err
	}
	head, err := (&gitx.Repo{Dir: r.work}).RevParse(ctx, "HEAD")
	if err != nil {
		return 0, "", "", err
	}
	received = filepath.Join(r.dir, fmt.Sprintf("received-%d", iss.ID))
	if err := r.tm.NewSession(ctx, delivery.SessionName(r.e.Config, iss), r.work, "sh", "-c", paneProgram, received); err != nil {
		return 0, "", "", err
	}
	res, err := r.e.Next(ctx, iss.ID, engine.Actor{Kind: engine.ActorAgent, Role: "developer"}, false)
	if err != nil {
		return 0, "", "", err
	}
	if res.To != "pr_ready" {
		return 0, "", "", fmt.Errorf("issue %d: the agent's next went to %q, not pr_ready: %+v", iss.ID, res.To, res)
	}
	return iss.ID, received, head, nil
}

// messageEnd is in the last line of the step back's message: the line
// that reaches the program when the message is whole, at its Enter.
const messageEnd = "`agenttree next` when fixed"

// paneProgram stands for the agent: it appends each line typed into its
// pane to the file named by $0, with the time it read it.
const paneProgram = `while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line" >> "$0"; done`

// measure waits for the step back's whole message to reach the program
// in the agent's pane and returns how long after sha's CI ended it did. The
// program's own clock is read, not the pane every few milliseconds: a
// tmux client per look would load the machine it measures.
func (r *rig) measure(ctx context.Context, id int, received, sha string, within time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	look := time.NewTicker(lookEvery)
	defer look.Stop()
	var shown time.Time
	for shown.IsZero() {
		data, _ := os.ReadFile(received)
		for _, line := range strings.Split(string(data), "\n") {
			at, text, _ := strings.Cut(line, " ")
			if sec, err := strconv.ParseFloat(at, 64); err == nil && strings.Contains(text, messageEnd) {
				shown = time.Unix(0, int64(sec*1e9))
				break
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("issue %d: its step back never reached its agent's pane within %s: %w", id, within, ctx.Err())
		case <-look.C:
		}
	}
	checks, err := r.e.Forge.Checks(ctx, sha)
	if err != nil {
		return 0, err
	}
	if len(checks) != 1 || checks[0].State != forge.CheckFailure || checks[0].CompletedAt.IsZero() {
		return 0, fmt.Errorf("issue %d: its CI is %+v, not one failed check", id, checks)
	}
	return shown.Sub(checks[0].CompletedAt), nil
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}
