package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// ConfigFile finds the config: --config or AGENTTREE_CONFIG (people only),
// else by walking up from the working directory to the main checkout's.
func (a *App) ConfigFile() (string, error) { return once(&a.found, a.findConfig) }

func (a *App) findConfig() (string, error) {
	path := a.ConfigPath
	if path == "" {
		path = a.Getenv("AGENTTREE_CONFIG")
	}
	// An agent is held to the rules of the repository it works in, never
	// to a file it names.
	if path != "" && engine.ActorFromEnv(a.Getenv).Kind == engine.ActorAgent {
		return "", &ExitError{Code: exitcode.Usage, Err: fmt.Errorf("agents use the repository's %s, found from the directory they work in; --config and AGENTTREE_CONFIG are for people (%s)", stages.FileName, path)}
	}
	if path == "" {
		var err error
		if path, err = stages.Find(a.WD); err != nil {
			// A linked worktree whose branch has no config of its own
			// still works under the main checkout's.
			var nf *stages.NotFoundError
			if !errors.As(err, &nf) || nf.Repo == "" {
				return "", err
			}
			main, ok := mainWorktree(nf.Repo)
			if !ok {
				return "", err
			}
			if _, serr := os.Stat(filepath.Join(main, stages.FileName)); serr != nil {
				return "", err
			}
			a.WorkDir = nf.Repo
			return filepath.Join(main, stages.FileName), nil
		}
		a.WorkDir = filepath.Dir(path)
		// In a linked git worktree (where agents work), the pipeline and the
		// issues are the main checkout's: a branch cannot bring its own,
		// weaker copy of the rules, nor a separate set of issues.
		if main, ok := mainWorktree(a.WorkDir); ok {
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

// LoadConfig finds and validates the config. Its warnings are summed up in
// a line on stderr: an agent runs `next` hundreds of times a day, and
// `agenttree validate` lists them where they are read.
func (a *App) LoadConfig() (*stages.Config, *hooks.Registry, error) {
	path, err := a.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	reg := HookRegistry()
	cfg, err := load.File(path, reg)
	if err != nil {
		return nil, nil, &ExitError{Code: exitcode.Usage, Err: fmt.Errorf("invalid config:\n%w", err)}
	}
	if n := len(cfg.Warnings); n > 0 {
		what := "1 warning"
		if n > 1 {
			what = fmt.Sprintf("%d warnings", n)
		}
		first := cfg.Warnings[0]
		fmt.Fprintf(a.ErrOut, "note: %s has %s (line %d: %s); `agenttree validate` lists them\n", path, what, first.Pos.Line, first.Msg)
	}
	return cfg, reg, nil
}

// Engine loads the config and opens the state directory beside it. A
// process that is an agent by what the operating system says cannot: its
// commands are requests to the controller (remote).
func (a *App) Engine(ctx context.Context) (*engine.Engine, error) {
	if a.Fixed != nil {
		return a.Fixed, nil
	}
	if c, err := a.Remote(); err != nil {
		return nil, err
	} else if c != nil {
		return nil, &ExitError{Code: exitcode.Waiting, Err: errors.New("this command is for people, and this process is an agent: " + a.agentWhy() +
			"; an agent's `next`, `issue create`, `issue show`, `status` and `inbox` are requests to the controller")}
	}
	cfg, reg, err := a.LoadConfig()
	if err != nil {
		return nil, err
	}
	stateDir := StateDirOf(cfg.File)
	store, err := a.OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// What a migration from the first layout left alone, which only a
	// person can settle (docs/SECURITY.md).
	for _, w := range store.Warnings() {
		fmt.Fprintln(a.ErrOut, "warning:", w)
	}
	// Hooks check the work tree the command ran in.
	return engine.New(cfg, store, reg, a.Logger(), engine.WithWorkDir(a.WorkDir),
		engine.WithForge(a.openForge(ctx, cfg, stateDir)), engine.WithGit(openGit)), nil
}

// EngineFor parses an issue id argument, then opens the engine.
func (a *App) EngineFor(ctx context.Context, arg string) (*engine.Engine, int, error) {
	id, err := ParseID(arg)
	if err != nil {
		return nil, 0, err
	}
	e, err := a.Engine(ctx)
	return e, id, err
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

// Reloader opens the engine: first the one already open, then afresh
// each time the controller finds the config changed.
func (a *App) Reloader(ctx context.Context, first *engine.Engine) func() (*engine.Engine, error) {
	return func() (*engine.Engine, error) {
		if first != nil {
			e := first
			first = nil
			return e, nil
		}
		return a.Engine(ctx)
	}
}
