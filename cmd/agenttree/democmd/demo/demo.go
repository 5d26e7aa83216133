// Package demo plays agenttree's reference pipeline on this machine, with
// no network and no account, and real parts only: a throwaway git
// repository with a bare origin, the local forge running real CI, the real
// controller as a process, and a real tmux session started by `agenttree
// start`, in which a scripted agent (cmd/agenttree/democmd/demoagent) reads what it is
// told and acts. The demo drives the story as a person would and prints
// a timeline of what happened.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/proc"
)

// Options say how the demo runs.
type Options struct {
	// Self is the agenttree program the demo runs for every command.
	Self string
	// Keep leaves the repository and the session behind (the controller
	// is stopped), and says how to attach and to start it again.
	Keep bool
	// Fast shortens every wait.
	Fast bool
	// Out receives the timeline.
	Out io.Writer
	// Timeout bounds the whole story.
	Timeout time.Duration
}

// Run plays the story and reports whether every step of it happened.
func Run(ctx context.Context, opts Options) error {
	for _, tool := range []string{"git", "tmux"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the demo needs %s, which is not installed: install it (Debian/Ubuntu: `sudo apt-get install git tmux`; macOS: `brew install git tmux`), then run the demo again", tool)
		}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "agenttree-demo-")
	if err != nil {
		return err
	}
	d := &run{opts: opts, dir: dir, start: time.Now(), tl: newTimeline(opts.Out)}
	if err = d.setup(ctx); err != nil {
		err = fmt.Errorf("setting up the demo in %s: %w", dir, err)
	} else {
		err = d.story(ctx)
	}
	d.stopController()
	d.summary(err)
	// A failed demo keeps its files, for the controller's log and the
	// repository to be looked at.
	d.cleanup(opts.Keep, err == nil)
	return err
}

// run is one playing of the story.
type run struct {
	opts  Options
	dir   string
	start time.Time
	tl    *timeline
	ctl   *exec.Cmd
	// repo is the person's checkout; bare is origin.
	repo, bare, socket string
}

func (d *run) path(name string) string { return filepath.Join(d.dir, name) }

// env is the environment of every command the demo runs: agenttree on
// PATH (the agent's command names it), git's identity, no AGENTTREE_*
// variable of the caller.
func (d *run) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTTREE_") && !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "TMUX") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+d.path("bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=Demo", "GIT_AUTHOR_EMAIL=demo@example.invalid",
		"GIT_COMMITTER_NAME=Demo", "GIT_COMMITTER_EMAIL=demo@example.invalid",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
}

// cmd prepares name args in dir with the demo's environment.
func (d *run) cmd(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Dir, c.Env = dir, d.env()
	proc.Group(c)
	c.Cancel = func() error { return proc.KillGroup(c) }
	c.WaitDelay = 5 * time.Second
	return c
}

// sh runs name args in dir and returns its output; a failure carries it.
func (d *run) sh(ctx context.Context, dir, name string, args ...string) (string, error) {
	out, err := d.cmd(ctx, dir, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// agenttree runs the demo's agenttree in the person's checkout.
func (d *run) agenttree(ctx context.Context, args ...string) (string, error) {
	return d.sh(ctx, d.repo, d.path("bin/agenttree"), args...)
}

func (d *run) setup(ctx context.Context) error {
	if err := os.MkdirAll(d.path("bin"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(d.opts.Self, d.path("bin/agenttree")); err != nil {
		return err
	}
	d.repo, d.bare, d.socket = d.path("shop"), d.path("origin.git"), d.path("tmux.sock")
	steps := [][]string{
		{d.dir, "git", "init", "-q", "--bare", "--initial-branch=main", d.bare},
		{d.dir, "git", "clone", "-q", d.bare, d.repo},
		{d.repo, "git", "checkout", "-q", "-B", "main"},
	}
	for _, s := range steps {
		if _, err := d.sh(ctx, s[0], s[1], s[2:]...); err != nil {
			return err
		}
	}
	files := map[string]string{
		".agenttree.yaml": pipeline(d.socket, d.opts.Fast),
		".gitignore":      "_agenttree/\n",
		"CHANGES.md":      "",
		"README.md":       "# shop\n\nA shop, built by an agent in agenttree's demo.\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(d.repo, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, s := range [][]string{{"add", "."}, {"commit", "-q", "-m", "The shop, and its pipeline"}, {"push", "-q", "origin", "main"}} {
		if _, err := d.sh(ctx, d.repo, "git", s...); err != nil {
			return err
		}
	}
	d.tl.say(d.since(), "a repository with a bare origin, the local forge and the reference pipeline, shortened, in %s", d.dir)
	return nil
}

// startController starts `agenttree controller` as a process of its own.
func (d *run) startController(ctx context.Context) error {
	log, err := os.Create(d.path("controller.log"))
	if err != nil {
		return err
	}
	interval := "1s"
	if d.opts.Fast {
		interval = "300ms"
	}
	// Not on ctx: it is stopped as a person does, with SIGTERM.
	d.ctl = d.cmd(context.Background(), d.repo, d.path("bin/agenttree"), "controller", "--interval", interval, "--log-format", "json")
	d.ctl.Stdout, d.ctl.Stderr = log, log
	if err := d.ctl.Start(); err != nil {
		log.Close()
		return err
	}
	log.Close()
	d.tl.say(d.since(), "the controller runs (pid %d; its log: %s)", d.ctl.Process.Pid, d.path("controller.log"))
	return nil
}

func (d *run) since() time.Duration { return time.Since(d.start) }

// cleanup stops what the demo started, unless keep, and removes its files
// if remove.
func (d *run) cleanup(keep, remove bool) {
	d.stopController()
	if keep {
		fmt.Fprintf(d.opts.Out, "\nkept: %s\n  the agent's session: tmux -S %s attach -t shop-developer-1\n  the controller again: cd %s && agenttree controller\n",
			d.dir, d.socket, d.repo)
		return
	}
	_ = exec.Command("tmux", "-S", d.socket, "kill-server").Run()
	if remove {
		_ = os.RemoveAll(d.dir)
	}
}

// stopController stops the controller as a person does (SIGINT), once.
func (d *run) stopController() {
	if d.ctl == nil || d.ctl.Process == nil || d.ctl.ProcessState != nil {
		return
	}
	_ = d.ctl.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = d.ctl.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = proc.KillGroup(d.ctl)
		<-done
	}
}

// errStory says a step of the story did not happen.
var errStory = errors.New("the story did not happen as it should")
