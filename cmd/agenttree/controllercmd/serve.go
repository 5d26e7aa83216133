package controllercmd

import (
	"context"
	"log/slog"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// serveAgents answers agents' requests on the state directory's socket
// until ctx is done, holding them to the controller's config.
func serveAgents(ctx context.Context, c *controller.Controller, stateDir string, log *slog.Logger) (wait func(), err error) {
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
			Status: func(ctx context.Context, who api.Caller, req api.StatusRequest) (any, error) {
				e, err := c.Engine()
				if err != nil {
					return nil, err
				}
				if _, _, err := who.Acting(req.Issue, false); err != nil {
					return nil, err
				}
				return statuscmd.AnswerOf(ctx, e, req)
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
