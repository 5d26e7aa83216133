package controllercmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/inboxcmd"
	"github.com/agenttree/agenttree/cmd/agenttree/issuecmd"
	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/sessions"
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
	srv := &api.Server{Sessions: tokens.Open(stateDir), Owner: owner, ExitCode: cmdutil.ExitCode, Log: log, Limits: api.DefaultLimits(),
		Handlers: api.Handlers{
			Next: func(ctx context.Context, who api.Caller, req api.NextRequest) (api.Output, error) {
				return serve(a, ctx, c, who, req.Issue, true, req, serveNext)
			},
			Create: func(ctx context.Context, who api.Caller, req api.CreateRequest) (api.Output, error) {
				return serve(a, ctx, c, who, 0, true, req, serveCreate)
			},
			Show: func(ctx context.Context, who api.Caller, req api.ShowRequest) (api.Output, error) {
				return serve(a, ctx, c, who, req.Issue, false, req, serveShow)
			},
			Status: func(ctx context.Context, who api.Caller, req api.StatusRequest) (api.Output, error) {
				return serve(a, ctx, c, who, req.Issue, false, req, serveStatus)
			},
			Inbox: func(ctx context.Context, who api.Caller, req api.InboxRequest) (api.Output, error) {
				return serve(a, ctx, c, who, 0, true, req, serveInbox)
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

// request is one agent's request, as the controller sees it.
type request struct {
	e     *engine.Engine
	actor engine.Actor
	// issue is the issue it acts on: the session's.
	issue int
}

// serve checks who asks, then runs f as the CLI would, printing into the
// output it returns. An agent acts on its session's issue only: named, the
// issue a request that acts names (0: none), must be that one; reads
// (acts false) may name any.
func serve[R any](a cmds, ctx context.Context, c *controller.Controller, who api.Caller, named int, acts bool, req R,
	f func(h *cmdutil.App, r request, req R) error) (api.Output, error) {
	e, err := c.Engine()
	if err != nil {
		return api.Output{}, err
	}
	r := request{e: e, issue: named}
	switch {
	case who.Session != nil:
		s := who.Session
		if acts && named > 0 && named != s.Issue {
			return api.Output{}, api.Refused(int(exitcode.Waiting), "this agent's session is for issue %d; issue %d is not its own", s.Issue, named)
		}
		r.actor = engine.Actor{Kind: engine.ActorAgent, Role: s.Role}
		r.issue = s.Issue
	case who.Person:
		r.actor = engine.Actor{Kind: engine.ActorHuman}
	default:
		return api.Output{}, api.Refused(int(exitcode.Waiting), "who is asking is not known")
	}
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

func serveNext(h *cmdutil.App, r request, req api.NextRequest) error {
	if r.issue <= 0 {
		return errors.New("which issue? a person names it (`next -i ID`)")
	}
	// The issue is read once, under its lock when nobody holds it (as
	// flowcmd's next does).
	tx, iss, err := r.e.Store.TryBegin(r.issue)
	if err != nil {
		return err
	}
	if tx != nil {
		defer tx.Unlock()
	} else if iss, err = r.e.Store.Get(r.issue); err != nil {
		return err
	}
	// The controller may have moved the issue and died before answering:
	// the agent's retry is told, not applied again.
	if req.RequestID != "" {
		if i := slices.IndexFunc(iss.History, func(h issues.HistoryEntry) bool { return h.Request == req.RequestID }); i >= 0 {
			done := iss.History[i]
			fmt.Fprintf(h.Out, "issue %d: this request was already done: %s → %s (%s); it is now at %s\n", iss.ID, done.From, done.To, done.Kind, iss.Stage)
			return nil
		}
	}
	// An agent of another OS user commits in a clone of its own: its
	// work is taken in first, for the gates to see.
	if err := sessions.New(r.e, nil).TakeWork(h.Ctx, r.issue); err != nil {
		return err
	}
	actor := r.actor
	actor.Request = req.RequestID
	res, err := r.e.NextFrom(h.Ctx, tx, iss, actor, req.DryRun)
	if err != nil {
		return err
	}
	return h.Report(res, req.JSON)
}

func serveCreate(h *cmdutil.App, r request, req api.CreateRequest) error {
	iss, err := r.e.Create(h.Ctx, engine.NewIssue{Title: req.Title, Flow: req.Flow, Labels: req.Labels, Vars: req.Vars, By: r.actor})
	if err != nil {
		return err
	}
	return issuecmd.PrintCreated(h, iss, req.JSON)
}

func serveShow(h *cmdutil.App, r request, req api.ShowRequest) error {
	id := req.Issue
	if id == 0 {
		id = r.issue
	}
	return issuecmd.Show(h, r.e, id, req.JSON)
}

func serveStatus(h *cmdutil.App, r request, req api.StatusRequest) error {
	if req.Issue != 0 {
		return statuscmd.ShowOne(h, strconv.Itoa(req.Issue), req.Block, req.JSON)
	}
	return statuscmd.ShowAll(h, r.e, req.JSON)
}

func serveInbox(h *cmdutil.App, r request, req api.InboxRequest) error {
	if r.issue <= 0 {
		return errors.New("an inbox is an issue's: an agent reads its own session's")
	}
	return inboxcmd.Show(h, r.e, r.issue, req.Recent, req.JSON)
}
