// Package agents is the controller's step that keeps agents alive
// (docs/ARCHITECTURE.md §9), at the start of each tick: a dead agent
// restarted, a rate limit waited out, a stalled one nudged, a person
// called, and a session started where its stage's role has auto_start.
package agents

import (
	"context"
	"errors"
	"fmt"

	"log/slog"
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/keepalive"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages"
)

// Keeper keeps the agents of a pipeline alive.
type Keeper struct {
	// Issue limits it to one issue; 0 means all.
	Issue int
	Tmux  *tmux.Client
	Log   *slog.Logger
	Now   func() time.Time
	// Issues gives the issues of ids as the tick knows them (a nil one
	// is left alone: the tick's scan says why); nil reads each from the
	// store. The controller's keeps what it read while the files stay
	// the same, so a tick with nothing to do reads no issue
	// (docs/ARCHITECTURE.md §6).
	Issues func(ids []int) []*issues.Issue
	// Fence, when set, is asked before each issue's agent is looked
	// after: once it says no (the controller's term ended), no agent is
	// started, restarted or nudged (docs/ARCHITECTURE.md §8).
	Fence func(context.Context) error
	// Mine, when set, says which issues' agents are this process's to
	// keep (with nodes, those given to its node: docs/ARCHITECTURE.md §8,
	// "Nodes"); the others are left alone.
	Mine func(id int) bool
	// Moved, when set, names the issues given to another node: a node
	// ends its sessions of them (Manager.Forget), so that two agents
	// never work on one issue.
	Moved func(id int) bool
}

// Keep is the tick's step that keeps agents alive (docs/ARCHITECTURE.md §9): for
// each issue, what sessions.Decide says of its agent (restart a dead one,
// wait out a rate limit, nudge a stalled one, call a person), and a
// session started where its stage's role has auto_start. It does nothing
// for a pipeline without `roles:`: no agents run there. Stopping ctx stops
// it between issues; an action under way finishes.
func (c *Keeper) Keep(ctx context.Context, e *engine.Engine) {
	if len(e.Config.Roles) == 0 {
		return
	}
	m := sessions.New(e, c.Tmux)
	m.Log = c.Log
	seen, err := m.Look(ctx)
	if err != nil {
		c.Log.Warn("looking at the agents' sessions", "err", err)
		if seen == nil {
			return
		}
	}
	ids, err := e.Store.IDs()
	if err != nil {
		c.Log.Error("listing issues", "err", err)
		return
	}
	if c.Issue != 0 {
		ids = slices.DeleteFunc(ids, func(id int) bool { return id != c.Issue })
	}
	all := c.issues(e, ids)
	work := context.WithoutCancel(ctx)
	for i, id := range ids {
		if ctx.Err() != nil || (c.Fence != nil && c.Fence(ctx) != nil) {
			return
		}
		iss := all[i]
		if iss == nil {
			continue // the tick's scan says why
		}
		s, ok := seen[id]
		if c.Mine != nil && !c.Mine(id) {
			if c.Moved != nil && c.Moved(id) && ok {
				c.forgetMoved(work, m, id)
			}
			continue
		}
		if err := c.keepAgent(work, e, m, iss, s, ok); err != nil {
			c.Log.Warn("keeping the agent alive", "issue", id, "err", err)
		}
	}
}

// issues are the issues of ids, nil where one cannot be read.
func (c *Keeper) issues(e *engine.Engine, ids []int) []*issues.Issue {
	if c.Issues != nil {
		return c.Issues(ids)
	}
	out := make([]*issues.Issue, len(ids))
	for i, id := range ids {
		if iss, err := e.Store.Get(id); err == nil {
			out[i] = iss
		}
	}
	return out
}

// keepAgent starts iss's session when its stage's role has auto_start
// and it has none, and else does what keepalive.Decide says of the one it has.
func (c *Keeper) keepAgent(ctx context.Context, e *engine.Engine, m *sessions.Manager, iss *issues.Issue, s sessions.Seen, recorded bool) error {
	if !recorded {
		s.Record = nil
	}
	if role, ok := sessions.AutoStart(e.Config, iss, s.Record); ok {
		return c.autoStart(ctx, e, m, iss, role)
	}
	if s.Record == nil {
		return nil
	}
	d := keepalive.Decide(keepalive.Situate(e.Config, iss, s, c.Now()))
	log := c.Log.With("issue", iss.ID, "agent", d.Record.Agent)
	switch d.Action {
	case keepalive.Save:
		if d.Reason != "" {
			log.Info(d.Reason)
		}
		return m.SaveRecord(&d.Record)
	case keepalive.Restart:
		log.Info("restarting the agent", "reason", d.Reason)
		_, err := m.Relaunch(ctx, d.Record, d.Resume, d.Reason)
		if errors.Is(err, sessions.ErrNoAgent) || errors.Is(err, sessions.ErrSandbox) {
			return c.escalateAgent(ctx, e, iss.ID, fmt.Sprintf("%s, and it cannot be started again: %v; fix the config, then `agenttree start %d --restart` and `agenttree resume %d --reason TEXT`",
				d.Reason, err, iss.ID, iss.ID))
		}
		return err
	case keepalive.Nudge:
		log.Info("nudging a stalled agent")
		return m.Nudge(ctx, d.Record, d.Reason)
	case keepalive.Escalate:
		if err := m.SaveRecord(&d.Record); err != nil {
			return err
		}
		return c.escalateAgent(ctx, e, iss.ID, d.Reason)
	}
	return nil
}

// autoStart starts iss's session of role. A start that cannot work
// (no agent, no sandbox) calls a person, once, instead of failing at
// every tick; anything else is tried again at the next.
func (c *Keeper) autoStart(ctx context.Context, e *engine.Engine, m *sessions.Manager, iss *issues.Issue, role stages.Role) error {
	res, err := m.Start(ctx, iss.ID, sessions.Options{Role: role})
	switch {
	case errors.Is(err, sessions.ErrNoAgent), errors.Is(err, sessions.ErrSandbox):
		return c.escalateAgent(ctx, e, iss.ID, fmt.Sprintf("the %s session of issue %d could not be started (auto_start): %v; fix the config, then `agenttree start %d` and `agenttree resume %d --reason TEXT`",
			role, iss.ID, err, iss.ID, iss.ID))
	case err != nil:
		return fmt.Errorf("auto_start the %s session: %w", role, err)
	}
	c.Log.Info("agent session started", "issue", iss.ID, "role", role, "agent", res.Session.Agent, "session", res.Session.Session, "state", res.State)
	return nil
}

// escalateAgent stops issue id for a person about its agent.
func (c *Keeper) escalateAgent(ctx context.Context, e *engine.Engine, id int, reason string) error {
	if _, err := e.Escalate(ctx, id, issues.EscalatedAgent, reason); err != nil {
		return fmt.Errorf("escalate: %w", err)
	}
	c.Log.Warn("a person is needed for the agent", "issue", id, "reason", reason)
	return nil
}

// forgetMoved ends issue id's session here and removes its record: the
// issue was given to another node, whose agent takes it on.
func (c *Keeper) forgetMoved(ctx context.Context, m *sessions.Manager, id int) {
	c.Log.Warn("the issue was given to another node: its agent here is stopped", "issue", id)
	if err := m.Forget(ctx, id); err != nil {
		c.Log.Warn("stopping the agent of an issue given to another node", "issue", id, "err", err)
	}
}
