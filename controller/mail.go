package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	"github.com/agenttree/agenttree/controller/agents"
	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/tmux"
)

// told reports whether every message iss's state calls for has been
// queued by this process.
func (c *Controller) told(e *engine.Engine, iss *issues.Issue) bool {
	to := c.carries(iss.ID)
	for _, m := range delivery.Channels(e.Config, e.Messages(iss)) {
		if takes(to, m.To) && !c.wasQueued(iss.ID, m.Key) {
			return false
		}
	}
	return true
}

// carries says which of issue id's recipients this process queues and
// carries messages to: with nodes, the agent's node types into its pane
// and the elected controller tells people (docs/ARCHITECTURE.md §8,
// "Nodes"); nil, all of them (no nodes), so that a delivery reads the
// outbox once, unfiltered.
func (c *Controller) carries(id int) func(outbox.Recipient) bool {
	c.mu.Lock()
	here := c.here
	c.mu.Unlock()
	if here == nil && !c.Node {
		return nil
	}
	agent := here == nil || here(id)
	return func(r outbox.Recipient) bool { return r == outbox.ToAgent && agent || r != outbox.ToAgent && !c.Node }
}

// takes reports whether to (carries) takes messages to r.
func takes(to func(outbox.Recipient) bool, r outbox.Recipient) bool { return to == nil || to(r) }

func (c *Controller) wasQueued(id int, key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queued[strconv.Itoa(id)+"/"+key]
}

// stuckOn names what a delivery is stuck on: the first message waiting
// and whether its session is missing (not the attempt counts, which
// change every tick).
func stuckOn(box *outbox.Box, err error) string {
	first := ""
	if pending, perr := box.Pending(); perr == nil && len(pending) > 0 {
		first = pending[0].ID
	}
	return fmt.Sprintf("%s no-session=%t", first, errors.Is(err, tmux.ErrNoSession))
}

// changedMailError records the last delivery error of issue id and
// reports whether it differs from the one before.
func (c *Controller) changedMailError(id int, err string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mailErrs == nil {
		c.mailErrs = map[int]string{}
	}
	changed := c.mailErrs[id] != err
	c.mailErrs[id] = err
	return changed
}

func (c *Controller) markQueued(id int, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queued == nil {
		c.queued = map[string]bool{}
	}
	c.queued[strconv.Itoa(id)+"/"+key] = true
}

// mail queues what issue id's state says must be told (a key already in
// the outbox adds nothing), then delivers its outbox: to the agent's tmux
// session, to the people (the manager's session, notify.command, the log).
// What cannot be delivered stays in the outbox for the next tick.
// scanned is the issue as the tick's scan read it; current says the pass
// left it so (no second read).
func (c *Controller) mail(ctx context.Context, e *engine.Engine, scanned *issues.Issue, current bool) {
	id := scanned.ID
	log := c.log().With("issue", id)
	iss := scanned
	if !current {
		var err error
		if iss, err = e.Store.Get(id); err != nil {
			log.Warn("reading issue for its messages", "err", err)
			return
		}
	}
	box := e.Outbox(id)
	to := c.carries(id)
	for _, m := range delivery.Channels(e.Config, e.Messages(iss)) {
		if c.wasQueued(id, m.Key) || !takes(to, m.To) {
			continue
		}
		if _, err := box.Put(ctx, m); err != nil {
			log.Warn("queueing a message", "kind", m.Kind, "err", err)
			continue
		}
		c.markQueued(id, m.Key)
		if m.To == outbox.ToManager {
			log.Warn("a person is needed", "kind", m.Kind, "message", m.Text)
		}
	}
	if !takes(to, outbox.ToAgent) {
		// not this process's agent: its node fetches for it
	} else if pending, perr := box.Pending(); perr == nil && slices.ContainsFunc(pending, firstTry) {
		// What the agent is told to rebase on is what it fetches from
		// the host, when it works in a clone of its own: fetched once
		// per new message, not at every tick a message waits.
		if err := sessions.New(e, nil).Refresh(ctx, id); err != nil {
			log.Warn("fetching the remote for the agent's clone", "err", err)
		}
	}
	if err := c.fenced(ctx); err != nil {
		log.Info("messages left in the outbox for the next controller", "err", err)
		return
	}
	sent, err := delivery.Deliver(ctx, e, iss, c.tmuxClient(e), c.log(), to)
	c.Metrics.Delivered(sent)
	for _, m := range sent {
		if m.State == outbox.Untaken {
			log.Warn("message typed, but the agent never took it; it stays in the outbox (`agenttree inbox`)", "to", m.To, "kind", m.Kind, "err", m.LastError)
			continue
		}
		if m.To == outbox.ToManager && e.Config.Tmux.Manager == "" {
			continue // the "a person is needed" line that queued it told people
		}
		log.Info("message delivered", "to", m.To, "kind", m.Kind)
	}
	if err != nil {
		// Said once while it stays the same: a session that is not there
		// yet must not fill the log, tick after tick.
		level := slog.LevelDebug
		if c.changedMailError(id, stuckOn(box, err)) {
			level = slog.LevelInfo
		}
		log.Log(ctx, level, "message not delivered; it stays in the outbox", "err", err)
	} else {
		c.changedMailError(id, "")
	}
}

// firstTry reports whether m is a message to the agent not tried yet.
func firstTry(m outbox.Message) bool { return m.To == outbox.ToAgent && m.Attempts == 0 }

func (c *Controller) tmuxClient(e *engine.Engine) *tmux.Client {
	if c.Tmux != nil {
		return c.Tmux
	}
	return delivery.TmuxClient(e)
}

// homes is where the issues' agents are this tick (Homes): which are
// this process's (nil: all, without nodes), set on keeper too, and
// whether agents may be looked after at all (not when it cannot be
// told).
func (c *Controller) homes(ctx context.Context, e *engine.Engine, known func([]int) []*issues.Issue, keeper *agents.Keeper) (here func(int) bool, keep bool) {
	keep = true
	if c.Homes != nil {
		h, err := c.Homes(ctx, e, known)
		if err != nil {
			c.log().Warn("where the issues' agents run cannot be told; no agent is started, stopped or typed to until it can", "err", err)
			here, keep = func(int) bool { return false }, false
		} else if here, keeper.Mine = h.Mine, h.Mine; c.Node {
			keeper.Moved = h.Elsewhere
		}
	}
	c.mu.Lock()
	c.here = here
	c.mu.Unlock()
	return here, keep
}
