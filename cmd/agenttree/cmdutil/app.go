// Package cmdutil is what every agenttree command group shares: the
// invocation (App: streams, environment, the root's flags), finding the
// config and opening the engine, telling people from agents (an agent's
// commands are requests to the controller), exit codes, and printing a
// transition's result.
package cmdutil

import (
	"encoding/json"
	"io"
	"log/slog"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
)

// App is one invocation of the CLI: its streams, environment and flags,
// and what every command group asks of them (the config, the engine, who
// acts). Each command group embeds it.
type App struct {
	Getenv func(string) string
	In     io.Reader
	// Out and ErrOut are the standard output and error.
	Out, ErrOut io.Writer
	// ConfigPath and Debug are the root's --config and --debug.
	ConfigPath string
	Debug      bool
	// WorkDir is the work tree the config was found from, when found by
	// walking up (a linked worktree's own root).
	WorkDir string
	// WD is the directory the command runs in.
	WD string
	// Fixed is the engine of the controller answering an agent's request:
	// the controller's config, not one loaded per request.
	Fixed *engine.Engine
	// found and asks are ConfigFile's and Remote's answers, worked out
	// once per command: a command asks both before it opens the engine,
	// and opening it asks them again.
	found *lookup[string]
	asks  *lookup[*api.Client]
	// stores are the backends opened (OpenStore), closed by Close.
	stores *openStores
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

// Logger is the engine's log: on stderr with --debug, else nowhere.
func (a *App) Logger() *slog.Logger {
	if !a.Debug {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(a.ErrOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// PrintJSON prints v on the standard output as indented JSON.
func (a *App) PrintJSON(v any) error {
	enc := json.NewEncoder(a.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
