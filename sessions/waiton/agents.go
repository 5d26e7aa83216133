package waiton

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages"
)

// Look is what status knows of the agents' sessions: their records
// (what `agenttree start` made), and which tmux sessions have a live pane
// (one tmux call for every issue).
type Look struct {
	records map[int]*sessions.Record
	// live names the tmux sessions whose pane is alive; nil when tmux
	// could not be asked (then a record is taken at its word). tmux is
	// asked once, by the first issue at an agent's stage, if any.
	live     map[string]bool
	liveOnce sync.Once
	ask      func() map[string]bool
}

// sessionLookTimeout bounds the tmux call: status is for a person waiting.
const sessionLookTimeout = 5 * time.Second

// LookAtAgents reads every session record, and asks tmux which sessions
// run when it is first needed. The records' directory is listed once, so
// a status of thousands of issues reads only the few records there are;
// one that cannot be read counts as none.
func LookAtAgents(ctx context.Context, e *engine.Engine) *Look {
	look := newAgentLook(ctx, e)
	if entries, err := os.ReadDir(e.Store.Layout().AgentSessions()); err == nil {
		for _, de := range entries {
			name, ok := strings.CutSuffix(de.Name(), ".yaml")
			if !ok {
				continue
			}
			if id, err := strconv.Atoi(name); err == nil {
				if rec, ok := sessions.Recorded(e, id); ok {
					look.records[id] = rec
				}
			}
		}
	}
	return look
}

// LookAtAgent is LookAtAgents for issue id alone.
func LookAtAgent(ctx context.Context, e *engine.Engine, id int) *Look {
	look := newAgentLook(ctx, e)
	if rec, ok := sessions.Recorded(e, id); ok {
		look.records[id] = rec
	}
	return look
}

// newAgentLook is an Look with no records yet, asking e's tmux
// server which sessions run when it is first needed.
func newAgentLook(ctx context.Context, e *engine.Engine) *Look {
	return &Look{records: map[int]*sessions.Record{}, ask: func() map[string]bool { return liveSessions(ctx, e.Config) }}
}

// liveSessions names the sessions on cfg's tmux server whose first pane
// is alive: none when no server runs, nil when tmux cannot be asked.
func liveSessions(ctx context.Context, cfg *stages.Config) map[string]bool {
	c := &tmux.Client{Socket: cfg.Tmux.Socket, Timeout: sessionLookTimeout}
	out, err := c.Run(ctx, "list-panes", "-a", "-F", "#{session_name}\t#{pane_dead}")
	switch {
	case errors.Is(err, tmux.ErrNoSession):
		return map[string]bool{}
	case err != nil:
		return nil
	}
	live := map[string]bool{}
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		name, dead, ok := strings.Cut(line, "\t")
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		live[name] = dead != "1"
	}
	return live
}

// record is issue id's session record, nil when it has none.
func (l *Look) record(id int) *sessions.Record {
	if l == nil {
		return nil
	}
	return l.records[id]
}

// running reports whether tmux shows the session session names alive;
// known is false when tmux could not be asked. session is called only
// when tmux shows any session: rendering its name for each of thousands
// of issues is a tenth of status.
func (l *Look) running(session func() string) (running, known bool) {
	if l == nil {
		return false, false
	}
	if l.ask != nil {
		l.liveOnce.Do(func() { l.live = l.ask() })
	}
	switch {
	case l.live == nil:
		return false, false
	case len(l.live) == 0:
		return false, true
	}
	return l.live[session()], true
}

// atFlowEnd reports whether node is the last of iss's flow without
// ending it: nothing moves the issue on from there (a flow with no
// terminal stage, which `agenttree validate` warns of).
func atFlowEnd(cfg *stages.Config, iss *issues.Issue, node *stages.Node) bool {
	flow, err := cfg.Flow(iss.Flow)
	return err == nil && len(flow.Nodes) > 0 && flow.Index(node.Path) == len(flow.Nodes)-1 && node.Terminal() == stages.TerminalNone
}

// flowEndWaiting is what an issue at the end of a flow with no terminal
// stage waits on: a person, to put it where it can go on or end.
func flowEndWaiting(iss *issues.Issue) Waiting {
	return Waiting{Who: WaiterPerson, Since: Entered(iss),
		What: fmt.Sprintf("a person: %s is the last stage of flow %s, which has no terminal stage, so nothing moves it on "+
			"(`agenttree move %d STAGE --reason TEXT`; give the flow a stage with `terminal: completion`)", iss.Stage, iss.Flow, iss.ID),
		Run: []string{fmt.Sprintf("agenttree move %d STAGE --reason TEXT", iss.ID)}}
}

// agentStageWaiting is what an issue at an agent's stage waits on: its
// agent when one of the stage's role runs, and otherwise what brings one
// (the controller's restart after a rate limit or an exit, auto_start, or
// a person's `agenttree start`). An agent runs when tmux shows its session
// alive: the one its session record names, else the one agenttree would
// start (a person may have started it by hand).
func agentStageWaiting(cfg *stages.Config, iss *issues.Issue, role stages.Role, poll *issues.Poll, look *Look) Waiting {
	start := fmt.Sprintf("agenttree start %d", iss.ID)
	rec := look.record(iss.ID)
	if rec != nil && rec.Role != role {
		rec = nil // another role's session: none of this stage's role
	}
	running, known := look.running(func() string {
		if rec != nil {
			return rec.Session
		}
		return sessions.Name(cfg, iss, role)
	})
	switch {
	case rec != nil && !rec.Stopped.IsZero():
		return Waiting{Who: WaiterPerson, Role: role, Since: rec.Stopped,
			What: fmt.Sprintf("the %s agent was stopped by a person: start it again with `%s`", role, start), Run: []string{start}}
	case rec != nil && !rec.RetryAt.IsZero():
		// The controller restarts it then: its next look at the agent.
		return Waiting{Who: WaiterController, Role: role, NextLook: rec.RetryAt,
			What: fmt.Sprintf("rate-limited: the %s agent %s restarts at %s", role, rec.Agent, rec.RetryAt.Local().Format("15:04")),
			Run:  []string{"agenttree controller", start + " --restart"}}
	case running || (rec != nil && !known):
		return agentWaiting(iss, role, poll)
	case rec != nil:
		return Waiting{Who: WaiterController, Role: role, Since: Entered(iss),
			What: fmt.Sprintf("controller: to restart the %s agent, whose session ended (`agenttree agents`)", role),
			Run:  []string{"agenttree controller", start + " --restart"}}
	}
	if _, auto := sessions.AutoStart(cfg, iss, look.record(iss.ID)); auto {
		return Waiting{Who: WaiterController, Role: role, Since: Entered(iss),
			What: fmt.Sprintf("controller: to start the %s agent (auto_start)", role), Run: []string{"agenttree controller", start}}
	}
	return Waiting{Who: WaiterPerson, Role: role, Since: Entered(iss),
		What: fmt.Sprintf("no %s agent is running: start one with `%s`", role, start), Run: []string{start}}
}

// Agent is issue id's agent as the look found it: its session record
// (nil when it has none), whether tmux shows its session alive, and
// whether tmux could be asked at all.
func (l *Look) Agent(id int) (rec *sessions.Record, alive, known bool) {
	rec = l.record(id)
	if rec == nil {
		return nil, false, false
	}
	alive, known = l.running(func() string { return rec.Session })
	return rec, alive, known
}
