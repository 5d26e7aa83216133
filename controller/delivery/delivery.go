// Package delivery carries an issue's outbox to where its messages go:
// typed into the agent's tmux session, shown on the manager's status
// line, run through notify.command. The controller delivers each tick and
// `agenttree inbox send` and `agenttree start` deliver at once; all three
// deliver the same way, so it lives apart from the loop that decides when
// (docs/ARCHITECTURE.md §6, docs/SECURITY.md).
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages"
)

// Channels are the messages to queue for msgs: one for people becomes one
// per way people are told (the manager's session, or the log alone, and
// notify.command), each delivered on its own, so one that fails neither
// holds back nor repeats the other.
func Channels(cfg *stages.Config, msgs []outbox.Message) []outbox.Message {
	out := make([]outbox.Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m)
		if m.To == outbox.ToManager && cfg.Notify.Command != "" {
			n := m
			n.To, n.Key = outbox.ToNotify, m.Key+"/notify"
			out = append(out, n)
		}
	}
	return out
}

// TmuxClient is the tmux server the config's sessions are on.
func TmuxClient(e *engine.Engine) *tmux.Client {
	return &tmux.Client{Socket: e.Config.Tmux.Socket, LockDir: e.Store.Root()}
}

// Deliver delivers iss's outbox as the controller does: to the agent's
// tmux session, to people (the log, the manager's session,
// notify.command), in order for each; to those only that to takes, when
// not nil (with nodes, the agent's node carries the agent's messages and
// the elected controller the people's). What cannot be delivered now
// stays queued; it returns what it delivered.
func Deliver(ctx context.Context, e *engine.Engine, iss *issues.Issue, client *tmux.Client, log *slog.Logger, to func(outbox.Recipient) bool) ([]outbox.Message, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &postman{log: log, e: e, iss: iss, tmux: client}
	return e.Outbox(iss.ID).Carry(ctx, outbox.Courier{Send: p.send, Seen: p.seen, Submit: p.submit, Takes: to})
}

// postman delivers one issue's messages.
type postman struct {
	log  *slog.Logger
	e    *engine.Engine
	iss  *issues.Issue
	tmux *tmux.Client
}

// session is the tmux session the agent's messages are typed into.
func (p *postman) session() string { return SessionName(p.e.Config, p.iss) }

func text(m outbox.Message) string { return outbox.Marker(m) + " " + m.Text }

// send delivers m: typed into the agent's session (the outbox records it
// typed before Enter), run through notify.command, or, for people, shown
// on the status line of the manager's session. People never receive
// keystrokes (docs/SECURITY.md): a notice typed into a person's shell
// would run what it quotes. A message for people with no manager's
// session is delivered by the log line the controller wrote when it
// queued it.
func (p *postman) send(ctx context.Context, m outbox.Message, typed func(into string) error) error {
	switch m.To {
	case outbox.ToNotify:
		return notify(ctx, p.e, p.iss, m, p.e.Config.Notify.Command)
	case outbox.ToManager:
		return p.display(ctx, m)
	}
	if err := p.sameProgram(ctx); err != nil {
		return err
	}
	return p.named(p.session(), p.tmux.SendTyped(ctx, p.session(), text(m), typed))
}

// display shows m to the people attached to the manager's session, if the
// config names one.
func (p *postman) display(ctx context.Context, m outbox.Message) error {
	manager := p.e.Config.Tmux.Manager
	if manager == "" {
		return nil
	}
	shown, err := p.tmux.Display(ctx, manager, text(m))
	if errors.Is(err, tmux.ErrNoSession) {
		// The person's session is not there: the log line and
		// notify.command told them; a status line nobody looks at
		// would not.
		p.log.Debug("no manager session to show a message in", "session", manager, "issue", p.iss.ID)
		return nil
	}
	if err == nil && shown == 0 {
		p.log.Debug("nobody attached to the manager session to show a message to", "session", manager, "issue", p.iss.ID)
	}
	return err
}

// sameProgram refuses a delivery into a pane that does not run what
// agenttree started there: a session made by `agenttree start` whose
// pane was respawned, or replaced, runs an unknown program. A session
// agenttree has no record of (made by hand) is held to the check every
// delivery makes (tmux: no shell, nothing in front of the program).
func (p *postman) sameProgram(ctx context.Context) error {
	rec, ok := sessions.Recorded(p.e, p.iss.ID)
	if !ok || rec.Session != p.session() || rec.PanePID == 0 {
		return nil
	}
	prog, err := p.tmux.Program(ctx, p.session())
	if err != nil {
		return p.named(p.session(), err)
	}
	if prog.PID != rec.PanePID {
		return fmt.Errorf("tmux session %s runs process %d, not the agent agenttree started there (process %d); "+
			"`agenttree start %d --restart` starts it again: %w", p.session(), prog.PID, rec.PanePID, p.iss.ID, tmux.ErrNotAgent)
	}
	return nil
}

// submit finishes the delivery of m, typed before: Enter, in the pane it
// was typed into. A session gone since, or made again in the meantime (a
// tmux server killed, the machine rebooted, the agent restarted by its
// keep-alive), took what was typed with it: Enter in the new pane would
// hand over nothing and count the message delivered, so it is typed
// again there. Only an agent's message is ever
// typed; one for people (typed into the manager's pane by an earlier
// version) is not pressed Enter on.
func (p *postman) submit(ctx context.Context, m outbox.Message) error {
	if m.To != outbox.ToAgent && m.To != "" {
		return nil
	}
	if err := p.sameProgram(ctx); err != nil {
		return err
	}
	err := p.named(p.session(), p.tmux.Submit(ctx, p.session(), text(m), m.TypedInto))
	if errors.Is(err, tmux.ErrNoSession) {
		return fmt.Errorf("%w: %w", outbox.ErrGone, err)
	}
	return err
}

// seen reports whether m reached its pane before a crash kept it from
// being recorded as typed: its marker is on the screen or in the history.
func (p *postman) seen(ctx context.Context, m outbox.Message) (string, bool, error) {
	if m.To != outbox.ToAgent && m.To != "" {
		return "", false, nil
	}
	session := p.session()
	pane, into, err := p.tmux.Where(ctx, session)
	if err != nil {
		return "", false, p.named(session, err)
	}
	screen, err := p.tmux.Capture(ctx, pane, 5000)
	if err != nil {
		return "", false, err
	}
	return into, strings.Contains(screen, outbox.Marker(m)), nil
}

// named says whose session a missing one is: the tmux client resolves
// the pane once per delivery and says no session exactly, by name.
func (p *postman) named(session string, err error) error {
	if errors.Is(err, tmux.ErrNoSession) {
		return fmt.Errorf("no tmux session %q (for issue %d): %w", session, p.iss.ID, err)
	}
	return err
}

// SessionName is the tmux session of the agent working on iss, the one
// its messages go to (sessions.Name for sessions.AgentRole).
func SessionName(cfg *stages.Config, iss *issues.Issue) string {
	return sessions.Name(cfg, iss, sessions.AgentRole(cfg, iss))
}
