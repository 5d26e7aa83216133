package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/stages"
)

// PaneState is what tmux shows of a session's agent.
type PaneState string

const (
	PaneLive PaneState = "live"
	// PaneDead: the agent exited; its pane remains with its status.
	PaneDead PaneState = "dead"
	// PaneMissing: the session is gone (a reboot, a killed server).
	PaneMissing PaneState = "missing"
)

// Seen is an issue's session as the controller finds it at a tick.
type Seen struct {
	Record *Record
	Pane   PaneState
	// Status and Output are a dead pane's exit status and last lines;
	// Screen digests what a live pane shows.
	Status int
	Output string
	Screen string
}

// deadOutput is how many lines of a dead pane Look reads.
const deadOutput = 50

// Look is every session record, by issue, with what tmux shows of it
// now. A record that cannot be read is reported in the error; the others
// are returned.
func (m *Manager) Look(ctx context.Context) (map[int]Seen, error) {
	recs, rerr := m.records().List()
	panes, err := m.panes(ctx)
	if err != nil {
		return nil, errors.Join(rerr, err)
	}
	out := make(map[int]Seen, len(recs))
	for _, rec := range recs {
		s := Seen{Record: rec, Pane: PaneMissing}
		p, ok := panes[rec.Session]
		switch {
		case !rec.Stopped.IsZero() || !ok:
		case p.dead:
			s.Pane, s.Status = PaneDead, p.status
			s.Output, _ = m.Tmux.Capture(ctx, p.id, deadOutput)
		default:
			s.Pane, s.Screen = PaneLive, rec.Screen
			// A screen that cannot be read counts as unchanged.
			if screen, err := m.Tmux.Capture(ctx, p.id, 0); err == nil {
				s.Screen = digest(screen)
			}
		}
		out[rec.Issue] = s
	}
	return out, rerr
}

func digest(screen string) string {
	sum := sha256.Sum256([]byte(screen))
	return hex.EncodeToString(sum[:8])
}

// LastLine is the last line the agent wrote in a pane's output.
func LastLine(output string) string {
	said := agentLines(output)
	if len(said) == 0 {
		return ""
	}
	return said[len(said)-1]
}

// AutoStart is the role whose session the controller starts for iss: its
// stage's, when that role's `roles:` entry says auto_start and rec (the
// issue's session record; nil: none) is another role's. A session of
// that role that a person stopped stays stopped; one that ended is the
// keep-alive's to restart.
func AutoStart(cfg *stages.Config, iss *issues.Issue, rec *Record) (stages.Role, bool) {
	node, ok := cfg.Node(iss.Stage)
	if !ok || iss.Escalated != nil || node.Terminal() != stages.TerminalNone || node.Controller() || node.HumanReview() {
		return "", false
	}
	role := node.Role()
	rs, ok := cfg.Sessions(role)
	if !ok || !rs.AutoStart || !role.Agent() || (rec != nil && rec.Role == role) {
		return "", false
	}
	return role, true
}

// SaveRecord writes rec as the issue's session record.
func (m *Manager) SaveRecord(rec *Record) error { return m.records().Put(rec) }

// Relaunch starts rec's agent again in the issue's worktree, as the
// controller does to keep it alive: resume runs the agent's
// resume_command (else its command). rec carries the counts keepalive.Decide
// updated; they are saved before anything starts, so a start that fails
// still spends them. The agent's first message says why it was
// restarted, then gives its stage's instructions.
func (m *Manager) Relaunch(ctx context.Context, rec Record, resume bool, why string) (*Start, error) {
	iss, err := m.Engine.Store.Get(rec.Issue)
	if err != nil {
		return nil, err
	}
	agent, ok := m.cfg().Agent(rec.Agent)
	if !ok {
		return nil, fmt.Errorf("%w: issue %d: agent %q is not declared under `agents:` (known: %v)", ErrNoAgent, rec.Issue, rec.Agent, m.cfg().AgentNames())
	}
	command := agent.Command
	if resume && agent.ResumeCommand != "" {
		command = agent.ResumeCommand
	}
	l, err := m.plan(ctx, command, rec.Issue, Name(m.cfg(), iss, rec.Role))
	if err != nil {
		return nil, fmt.Errorf("issue %d, agent %s: %w", rec.Issue, agent.Name, err)
	}
	if err := m.records().Put(&rec); err != nil {
		return nil, err
	}
	if err := m.End(ctx, rec.Issue, rec.Session); err != nil {
		return nil, err
	}
	rec.Session, rec.Socket, rec.Branch = Name(m.cfg(), iss, rec.Role), m.Tmux.Socket, iss.Branch
	rec.Sandbox, rec.Started = m.cfg().Sandbox.String(), time.Now().UTC()
	rec.Pane, rec.TokenHash, rec.Screen, rec.ChangedAt, rec.NudgedAt = "", "", "", time.Time{}, time.Time{}
	note := fmt.Sprintf("You were restarted: %s. Your work so far is in %s; carry on from where you stopped.", why, rec.Worktree)
	msg, err := m.launch(ctx, iss, &rec, l, note)
	if err != nil {
		return nil, err
	}
	return &Start{State: Restarted, Session: &rec, Message: msg}, nil
}

// Nudge tells rec's agent text (that it seems stalled), then saves rec,
// which records when it was told.
func (m *Manager) Nudge(ctx context.Context, rec Record, text string) error {
	if _, err := m.Engine.Outbox(rec.Issue).Put(ctx, outbox.Message{
		Key: "nudge-" + rec.NudgedAt.Format(time.RFC3339), To: outbox.ToAgent, Kind: "nudge", Text: text}); err != nil {
		return fmt.Errorf("queue a nudge for issue %d: %w", rec.Issue, err)
	}
	return m.records().Put(&rec)
}
