// Package sessions runs agents in tmux sessions (docs/ARCHITECTURE.md §9): each issue
// gets a git worktree on its branch and a session, named as the notifier
// names it, running the agent its role declares with the issue, the role
// and a session token in its environment. A record of each session is
// kept under the host's state, for `agenttree agents`, `stop`, and the
// controller that keeps agents alive.
package sessions

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/records"
	"github.com/agenttree/agenttree/sessions/sandbox"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages"
)

// Errors callers tell apart with errors.Is.
var (
	// ErrFinished: the issue is at a terminal stage; no agent works on it.
	ErrFinished = errors.New("issue is finished")
	// ErrNotYet: no agent works on the issue where it is now (parked, or
	// at the controller's stage); the error says when one does.
	ErrNotYet = errors.New("no agent works on the issue now")
	// ErrNoAgent: the role or the agent asked for cannot run (unknown,
	// no `roles:` entry, no agents listed, its program not found).
	ErrNoAgent = sandbox.ErrCommand
	// ErrSandbox: the configured sandbox cannot run agents here.
	ErrSandbox = sandbox.ErrUnavailable
	// ErrNoSession: the issue has no session record.
	ErrNoSession = records.ErrNoSession
)

// Manager starts, stops and lists the agent sessions of one pipeline.
type Manager struct {
	Engine *engine.Engine
	Tmux   *tmux.Client
	// Repo is the main checkout worktrees are added to (New: the config
	// file's directory).
	Repo string
	// Remote is fetched before a worktree is made (New:
	// gitx.DefaultRemote).
	Remote string
	Log    *slog.Logger
}

// New returns the manager of e's sessions on client's tmux server.
func New(e *engine.Engine, client *tmux.Client) *Manager {
	return &Manager{Engine: e, Tmux: client, Repo: filepath.Dir(e.Config.File), Remote: gitx.DefaultRemote, Log: e.Log}
}

func (m *Manager) cfg() *stages.Config { return m.Engine.Config }

func (m *Manager) records() records.Store { return records.Open(m.Engine.Store.Layout()) }

func (m *Manager) log() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}

// AgentRole is the role of the agent that works on iss: its stage's, or
// while the controller or a person has the issue, that of the nearest
// agent stage before it in its flow (the one told of what happens there).
func AgentRole(cfg *stages.Config, iss *issues.Issue) stages.Role {
	node, ok := cfg.Node(iss.Stage)
	if !ok {
		return stages.RoleDeveloper
	}
	flow, err := cfg.Flow(iss.Flow)
	if err != nil {
		return node.Role()
	}
	for i := flow.Index(node.Path); i >= 0; i-- {
		n := flow.Nodes[i]
		if !n.Controller() && !n.HumanReview() && n.Role() != stages.RoleHuman {
			return n.Role()
		}
	}
	return stages.RoleDeveloper
}

// Name is the tmux session of iss's agent of role: the config's
// tmux.session template over the project (without `project:`, the
// repository's directory name, as worktrees are named: two repositories
// on one tmux server must not share their agents' sessions), the role and
// the issue. For AgentRole it is the session the controller delivers iss's
// messages to.
func Name(cfg *stages.Config, iss *issues.Issue, role stages.Role) string {
	vars := map[string]string{"project": cfg.ProjectName(), "role": string(role), "issue_id": strconv.Itoa(iss.ID),
		"issue_title": iss.Title, "stage": iss.Stage, "branch": iss.Branch}
	return tmux.SessionName(stages.Render(cfg.Tmux.Session, vars))
}

// since is how long ago t was, in whole seconds.
func since(now, t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return now.Sub(t).Truncate(time.Second)
}
