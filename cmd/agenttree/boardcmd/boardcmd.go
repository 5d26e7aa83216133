// Package boardcmd holds `agenttree board`: the web board
// (docs/ARCHITECTURE.md §11) served on its own, and Serve, which the
// controller calls for `controller --http`.
package boardcmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/board"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/metrics"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdBoard(a, nil)}
}

// DefaultAddr is where the board listens unless told: loopback, on a port
// the system picks.
const DefaultAddr = "127.0.0.1:0"

// BoardOptions is what `board` was asked.
type BoardOptions struct {
	*cmdutil.App
	// HTTP is the address to listen on; Public allows one that is not
	// loopback.
	HTTP   string
	Public bool
}

func newCmdBoard(a *cmdutil.App, runF func(context.Context, *BoardOptions) error) *cobra.Command {
	opts := &BoardOptions{App: a}
	cmd := &cobra.Command{
		Use:   "board [--http ADDR]",
		Short: "Serve the web board: the pipeline live, each issue's page, approve and the other people's actions",
		Long: "Serve the web board until interrupted: the pipeline as columns of stages with the issues in\n" +
			"them (those waiting for a person first), each issue's history, messages, CI failure and\n" +
			"agent's pane, updated live, and buttons for approve, reject, resume, skip, abort and move,\n" +
			"which act as you, as the commands of the same names do.\n\n" +
			"It prints the URL to open, which carries a login token made afresh each time: whoever has\n" +
			"the URL can act as you. It listens on loopback only; --public allows another address, and\n" +
			"so everyone who can reach it and has the URL. `agenttree controller --http ADDR` serves\n" +
			"the same board from the controller.\n\n" +
			cmdutil.ExitStatus("0 stopped", cmdutil.ExitUsageOrConfig+" (or the address is taken or not loopback), "+cmdutil.ExitNotPerson),
		Example: "  agenttree board\n  agenttree board --http 127.0.0.1:8080",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return boardRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.HTTP, "http", DefaultAddr, "address to listen on, host:port (port 0: any free one)")
	cmd.Flags().BoolVar(&opts.Public, "public", false, "allow an address that is not loopback: everyone who reaches it and has the URL acts as you")
	return cmd
}

func boardRun(ctx context.Context, opts *BoardOptions) error {
	a := opts.App
	actor := engine.ActorFromEnv(a.Getenv)
	if actor.Kind != engine.ActorHuman {
		return &cmdutil.ExitError{Code: exitcode.Waiting, Err: fmt.Errorf("the board acts for a person; %s cannot serve it", actor)}
	}
	first, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	log := a.Logger()
	// The controller's reloading: the engine again only when the config
	// file changed, the last good one while it does not load.
	reload := &controller.Controller{Load: a.Reloader(ctx, first), Log: log}
	// No controller runs here: the numbers read when scraped (the
	// issues, the forge's counts), none of a tick's.
	wait, err := Serve(ctx, reload.Engine, actor, opts.HTTP, opts.Public, metrics.New(reload.Engine).Handler(), a.Out, log)
	if err != nil {
		return err
	}
	wait()
	return nil
}

// Serve starts a board over load's engine on addr, acting as actor, with
// metrics at /metrics (nil: none), and prints its URL (with the login token) on out; it serves until ctx is
// done, and wait waits for that. An address that is not loopback is
// refused unless public.
func Serve(ctx context.Context, load func() (*engine.Engine, error), actor engine.Actor, addr string, public bool, metrics http.Handler, out io.Writer, log *slog.Logger) (wait func(), err error) {
	srv, err := board.New(load, actor, log)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: exitcode.Waiting, Err: err}
	}
	srv.Public, srv.Metrics = public, metrics
	ln, err := board.Listen(addr, public)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	fmt.Fprintf(out, "board: %s\n", board.URL(ln, srv.Token()))
	if public {
		fmt.Fprintf(out, "board: listening on %s: everyone who reaches it and has the URL sees every issue and acts as you\n", ln.Addr())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("the board stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return func() { <-done }, nil
}
