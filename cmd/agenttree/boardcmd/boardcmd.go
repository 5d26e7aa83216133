// Package boardcmd holds `agenttree board`: the web board
// (docs/ARCHITECTURE.md §11) served on its own, and Serve, which the
// controller calls for `controller --http`.
package boardcmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
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
	b, err := Serve(ctx, reload.Engine, actor, opts.HTTP, opts.Public, metrics.New(reload.Engine).Handler(), log)
	if err != nil {
		return err
	}
	// The board's standard output is the person's: the URL and nothing
	// else goes there, its log goes to stderr.
	b.Show(a.Out)
	b.Wait()
	return nil
}

// Served is a board being served.
type Served struct {
	// URL is the address to open, the login token in it: for the person
	// alone, never for a log (docs/SECURITY.md, "The board").
	URL string
	// Addr is the address it listens on; Public says it may be beyond
	// loopback.
	Addr   net.Addr
	Public bool
	done   chan struct{}
}

// Show prints the URL to open on out, where only the person reads it,
// and with --public what that exposes.
func (b *Served) Show(out io.Writer) {
	fmt.Fprintf(out, "board: %s\n", b.URL)
	if b.Public {
		fmt.Fprintf(out, "board: %s\n", b.Exposed())
	}
}

// Exposed says what listening beyond loopback exposes (no token in it).
func (b *Served) Exposed() string {
	return fmt.Sprintf("listening on %s: everyone who reaches it and has the URL sees every issue and acts as you", b.Addr)
}

// Wait waits for the board to stop, once its context is done.
func (b *Served) Wait() { <-b.done }

// Serve starts a board over load's engine on addr, acting as actor, with
// metrics at /metrics (nil: none); it serves until ctx is done. It prints
// nothing: the caller shows the URL where only the person reads it. An
// address that is not loopback is refused unless public.
func Serve(ctx context.Context, load func() (*engine.Engine, error), actor engine.Actor, addr string, public bool, metrics http.Handler, log *slog.Logger) (*Served, error) {
	srv, err := board.New(load, actor, log)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: exitcode.Waiting, Err: err}
	}
	srv.Public, srv.Metrics = public, metrics
	ln, err := board.Listen(addr, public)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	b := &Served{URL: board.URL(ln, srv.Token()), Addr: ln.Addr(), Public: public, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("the board stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return b, nil
}
