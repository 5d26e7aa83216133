package controllercmd

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/agenttree/agenttree/cmd/agenttree/boardcmd"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// serveBoard serves the web board beside the controller (--http), acting
// as the person who runs it, and hands that person its URL without
// putting the login token in the controller's log (docs/SECURITY.md,
// "The board"): the log is stderr, which a service manager, a
// redirection or a shared log keeps. The URL goes to a file under the
// state directory only its owner reads, which the log names, and on
// stdout when that is a terminal, as `agenttree board` prints it; a
// controller's stdout that is not one is as likely kept as its log.
// wait waits for the board to stop once ctx is done, and removes the
// file; it is nil when the board did not start.
func (a cmds) serveBoard(ctx context.Context, c *controller.Controller, stateDir string, opts *ControllerOptions) (wait func(), err error) {
	b, err := boardcmd.Serve(ctx, c.Engine, engine.ActorFromEnv(a.Getenv), opts.HTTP, opts.Public, c.Metrics.Handler(), c.Log)
	if err != nil {
		return nil, err
	}
	path := statedir.Layout{Root: stateDir}.BoardURL()
	// atomicfile makes the file 0600 from its first byte and renames it
	// over whatever a killed controller left, whoever could read that.
	if err := atomicfile.Write(path, []byte(b.URL+"\n"), 0o600); err != nil {
		return b.Wait, fmt.Errorf("the board's URL for you to read: %w", err)
	}
	if f, ok := a.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b.Show(a.Out)
	}
	c.Log.Info("board listening: open the URL in url_file, which holds its login token", "addr", b.Addr.String(), "url_file", path)
	if b.Public {
		c.Log.Warn("board " + b.Exposed())
	}
	return func() {
		b.Wait()
		if err := os.Remove(path); err != nil {
			c.Log.Warn("the board's URL file stays", "url_file", path, "err", err)
		}
	}, nil
}
