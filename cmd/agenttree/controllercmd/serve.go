package controllercmd

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// serveAgents answers agents' requests on the state directory's socket
// until ctx is done, holding them to the controller's config.
func (a cmds) serveAgents(ctx context.Context, c *controller.Controller, stateDir string, log *slog.Logger) (wait func(), err error) {
	owner, err := identity.Owner(stateDir)
	if err != nil {
		return nil, err
	}
	socket := statedir.Layout{Root: stateDir}.Socket()
	ln, err := api.Listen(socket)
	if err != nil {
		return nil, err
	}
	agents := api.Agents{Engine: c.Engine}
	srv := &api.Server{Sessions: tokens.Open(stateDir), Owner: owner, ExitCode: cmdutil.ExitCode, Log: log, Limits: api.DefaultLimits(),
		Handlers: api.Handlers{
			Next:   agents.Next,
			Create: agents.Create,
			Show:   agents.Show,
			Inbox:  agents.Inbox,
			Status: func(ctx context.Context, who api.Caller, req api.StatusRequest) (api.Output, error) {
				return serve(a, ctx, c, who, req.Issue, req, serveStatus)
			},
		}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("the agents' socket stopped", "socket", socket, "err", err)
		}
	}()
	log.Info("answering agents", "socket", socket, "max_conns", srv.Limits.Conns, "max_conns_per_peer", srv.Limits.PerPeer)
	return func() { <-done }, nil
}

// request is one agent's read, as the controller sees it.
type request struct {
	e *engine.Engine
	// issue is the issue it reads: the session's, or the one a person
	// named.
	issue int
}

// serve runs f, a read that prints what the CLI would have, into the
// output it returns, for the read whose rendering still needs the
// controller's config and state (status); the other requests are
// api.Agents', rendered by the agent's CLI.
func serve[R any](a cmds, ctx context.Context, c *controller.Controller, who api.Caller, named int, req R,
	f func(h *cmdutil.App, r request, req R) error) (api.Output, error) {
	e, err := c.Engine()
	if err != nil {
		return api.Output{}, err
	}
	_, id, err := who.Acting(named, false)
	if err != nil {
		return api.Output{}, err
	}
	r := request{e: e, issue: id}
	var out bytes.Buffer
	h := &cmdutil.App{Ctx: ctx, Getenv: func(string) string { return "" }, Out: &out, ErrOut: &out, WD: a.WD, ConfigPath: a.ConfigPath, Fixed: e}
	err = f(h, r, req)
	var se cmdutil.SilentExit
	switch {
	case errors.As(err, &se):
		return api.Output{Text: out.String(), ExitCode: int(se)}, nil
	case err != nil:
		return api.Output{Text: out.String()}, &api.Error{Message: err.Error(), ExitCode: cmdutil.ExitCode(err)}
	}
	return api.Output{Text: out.String()}, nil
}

func serveStatus(h *cmdutil.App, r request, req api.StatusRequest) error {
	if req.Issue != 0 {
		return statuscmd.ShowOne(h, strconv.Itoa(req.Issue), req.Block, req.JSON)
	}
	return statuscmd.ShowAll(h, r.e, req.JSON)
}
