package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// app is one invocation of the CLI: its streams, environment and flags.
type app struct {
	ctx        context.Context
	getenv     func(string) string
	stdin      io.Reader
	out, err   io.Writer
	configPath string
	debug      bool
	// workDir is the work tree the config was found from, when found by
	// walking up (a linked worktree's own root).
	workDir string
	// wd is the directory the command runs in.
	wd string
	// fixed is the engine of the controller answering an agent's request:
	// the controller's config, not one loaded per request.
	fixed *engine.Engine
	// found and asks are configFile's and remote's answers, worked out
	// once per command: a command asks both before it opens the engine,
	// and opening it asks them again.
	found *lookup[string]
	asks  *lookup[*api.Client]
}

// lookup is an answer worked out once.
type lookup[T any] struct {
	v   T
	err error
}

// once returns *l's answer, working it out with find the first time.
func once[T any](l **lookup[T], find func() (T, error)) (T, error) {
	if *l == nil {
		v, err := find()
		*l = &lookup[T]{v: v, err: err}
	}
	return (*l).v, (*l).err
}

// run runs the CLI with args in the working directory wd.
func run(ctx context.Context, wd string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: ctx, wd: wd, getenv: getenv, stdin: stdin, out: stdout, err: stderr}
	root := a.rootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var se silentExit
	if errors.As(err, &se) {
		return int(se)
	}
	fmt.Fprintln(stderr, "error:", err)
	code := exitCode(err)
	if wantsJSON(args) {
		// Programs asked for JSON: they get it on failure too.
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"error": err.Error(), "exit_code": code})
	}
	return code
}

// exitCode is the exit status a command's error ends it with.
func exitCode(err error) int {
	var se silentExit
	var ee *exitError
	var ae *api.Error
	var unavailable *api.Unavailable
	switch {
	case errors.As(err, &se):
		return int(se)
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ae):
		return ae.ExitCode
	case errors.As(err, &unavailable):
		return exitWaiting // a person starts the controller
	case errors.Is(err, context.Canceled):
		return exitInterrupted // Ctrl-C, even while waiting for a lock
	case errors.Is(err, atomicfile.ErrLocked):
		return exitWaiting // nothing changed; another process has the issue
	case errors.As(err, new(*issues.TamperedError)):
		return exitWaiting // nothing changed; a person verifies and repairs
	}
	return exitUsage
}

func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "agenttree",
		Short:         "Move issues through the pipeline declared in .agenttree.yaml",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("agenttree {{.Version}}\n")
	root.PersistentFlags().StringVar(&a.configPath, "config", "", "path to .agenttree.yaml (default: found by walking up from the current directory)")
	root.PersistentFlags().BoolVar(&a.debug, "debug", false, "log what the engine does to stderr")
	root.AddCommand(a.initCmd(), a.validateCmd(), a.stagesCmd(), a.graphCmd(), a.issueCmd(),
		a.nextCmd(), a.approveCmd(), a.statusCmd(), a.watchCmd(), a.inboxCmd(), a.sendCmd(), a.prCmd(), a.ciRunnerCmd(), a.controllerCmd(), a.tokenCmd(), a.doctorCmd(), a.demoCmd(), a.demoAgentCmd())
	root.AddCommand(a.manualCmds()...)
	root.AddCommand(a.verifyCmd(), a.repairCmd())
	root.AddCommand(a.sessionCmds()...)
	root.AddCommand(a.cleanCmd())
	root.AddCommand(a.schemaCmd())
	// The streams first: the completion scripts write where they were
	// when their command was made.
	root.SetIn(a.stdin)
	root.SetOut(a.out)
	root.SetErr(a.err)
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil {
		c.Example = "  source <(agenttree completion bash)            # this shell; add it to ~/.bashrc to keep it\n" +
			"  agenttree completion zsh > \"${fpath[1]}/_agenttree\"\n" +
			"  agenttree completion fish > ~/.config/fish/completions/agenttree.fish"
	}
	a.addCompletions(root)
	return root
}

func (a *app) logger() *slog.Logger {
	if !a.debug {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(a.err, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// configFile finds the config: --config or AGENTTREE_CONFIG (people only),
// else by walking up from the working directory to the main checkout's.
func (a *app) configFile() (string, error) { return once(&a.found, a.findConfig) }

func (a *app) findConfig() (string, error) {
	path := a.configPath
	if path == "" {
		path = a.getenv("AGENTTREE_CONFIG")
	}
	// An agent is held to the rules of the repository it works in, never
	// to a file it names.
	if path != "" && engine.ActorFromEnv(a.getenv).Kind == engine.ActorAgent {
		return "", &exitError{code: exitUsage, err: fmt.Errorf("agents use the repository's %s, found from the directory they work in; --config and AGENTTREE_CONFIG are for people (%s)", stages.FileName, path)}
	}
	if path == "" {
		var err error
		if path, err = stages.Find(a.wd); err != nil {
			return "", err
		}
		a.workDir = filepath.Dir(path)
		// In a linked git worktree (where agents work), the pipeline and the
		// issues are the main checkout's: a branch cannot bring its own,
		// weaker copy of the rules, nor a separate set of issues.
		if main, ok := mainWorktree(a.workDir); ok {
			if _, err := os.Stat(filepath.Join(main, stages.FileName)); err == nil {
				path = filepath.Join(main, stages.FileName)
			}
		}
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("config file %s: %w; pass an existing file to --config, or run `agenttree init`", path, err)
	}
	return path, nil
}

// loadConfig finds and validates the config. Warnings go to stderr.
func (a *app) loadConfig() (*stages.Config, *hooks.Registry, error) {
	path, err := a.configFile()
	if err != nil {
		return nil, nil, err
	}
	reg := hookRegistry()
	cfg, err := load.File(path, reg)
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, err: fmt.Errorf("invalid config:\n%w", err)}
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(a.err, w)
	}
	return cfg, reg, nil
}

// engine loads the config and opens the state directory beside it. A
// process that is an agent by what the operating system says cannot: its
// commands are requests to the controller (remote).
func (a *app) engine() (*engine.Engine, error) {
	if a.fixed != nil {
		return a.fixed, nil
	}
	if c, err := a.remote(); err != nil {
		return nil, err
	} else if c != nil {
		return nil, &exitError{code: exitWaiting, err: errors.New("this command is for people, and this process is an agent: " + a.agentWhy() +
			"; an agent's `next`, `issue create`, `issue show`, `status` and `inbox` are requests to the controller")}
	}
	cfg, reg, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	stateDir := stateDirOf(cfg.File)
	store, err := issues.Open(stateDir)
	if err != nil {
		return nil, err
	}
	e := engine.New(cfg, store, reg, a.logger())
	if a.workDir != "" {
		e.WorkDir = a.workDir // hooks check the work tree the command ran in
	}
	e.Forge = a.openForge(cfg, stateDir)
	e.Git = openGit
	return e, nil
}

// engineFor parses an issue id argument, then opens the engine.
func (a *app) engineFor(arg string) (*engine.Engine, int, error) {
	id, err := parseID(arg)
	if err != nil {
		return nil, 0, err
	}
	e, err := a.engine()
	return e, id, err
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// mainWorktree returns the main checkout of the repository when dir is the
// root of a linked worktree, whose .git is a file naming
// <main>/.git/worktrees/<name>.
func mainWorktree(dir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", false // a directory (main checkout) or no git at all
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	worktrees := filepath.Dir(gitdir)
	if filepath.Base(worktrees) != "worktrees" {
		return "", false
	}
	common := filepath.Dir(worktrees)
	if filepath.Base(common) != ".git" {
		return "", false // a bare repository's worktree: no main checkout
	}
	return filepath.Dir(common), true
}
