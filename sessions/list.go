package sessions

import (
	"context"
	"errors"
	"time"
)

// Status is a session's record and what tmux says of it now.
type Status struct {
	*Record
	// Alive: the session is there and its agent runs.
	Alive bool `json:"alive"`
	// Exited: the agent ended and its pane remains; ExitStatus is its
	// status, -1 while tmux does not know it.
	Exited     bool `json:"exited"`
	ExitStatus int  `json:"exit_status"`
	// Idle is how long the pane has shown no change.
	Idle time.Duration `json:"-"`
	// LastLine is the last line the pane shows.
	LastLine string `json:"last_line"`
}

// Stop ends issue id's session and revokes its token; the worktree stays,
// and the record says the session was stopped, so that nothing starts it
// again on its own.
func (m *Manager) Stop(ctx context.Context, id int) (*Record, error) {
	rec, err := m.records().Get(id)
	if err != nil {
		return nil, err
	}
	if err := m.End(ctx, id, rec.Session); err != nil {
		return nil, err
	}
	rec.Stopped = time.Now().UTC().Truncate(time.Second)
	if err := m.records().Put(rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// Forget ends issue id's session here, revokes its token and removes its
// record, keeping the worktree: the issue went to another node
// (state.nodes, docs/ARCHITECTURE.md §8), and a record left behind would
// keep this node from starting its agent should the issue come back.
func (m *Manager) Forget(ctx context.Context, id int) error {
	rec, err := m.records().Get(id)
	if err != nil {
		return err
	}
	if err := m.End(ctx, id, rec.Session); err != nil {
		return err
	}
	return m.records().Remove(id)
}

// List is every session record, by issue, with its state now. A record
// that cannot be read is reported in the error; the others are listed.
func (m *Manager) List(ctx context.Context) ([]Status, error) {
	recs, rerr := m.records().List()
	panes, err := m.panes(ctx)
	if err != nil {
		return nil, errors.Join(rerr, err)
	}
	now := time.Now()
	out := make([]Status, 0, len(recs))
	for _, rec := range recs {
		st := Status{Record: rec}
		p, ok := panes[rec.Session]
		if ok && rec.Stopped.IsZero() {
			st.Alive, st.Exited, st.Idle = !p.dead, p.dead, since(now, p.activity)
			if p.dead {
				st.ExitStatus = p.status
			}
			st.LastLine = m.lastLine(ctx, p.id)
		}
		out = append(out, st)
	}
	return out, rerr
}

// lastLine is the last line the agent wrote in pane, not blank and not
// the note tmux writes at the bottom of a dead pane ("Pane is dead"); ""
// if it cannot be read.
func (m *Manager) lastLine(ctx context.Context, pane string) string {
	screen, err := m.Tmux.Capture(ctx, pane, 0)
	if err != nil {
		m.log().Debug("reading an agent's pane", "pane", pane, "err", err)
		return ""
	}
	said := agentLines(screen)
	if len(said) == 0 {
		return ""
	}
	return said[len(said)-1]
}

// Record is issue id's session record; ErrNoSession when it has none.
func (m *Manager) Record(id int) (*Record, error) { return m.records().Get(id) }
