// Package records keeps what agenttree knows of each issue's agent
// session, one file per issue under the host's state (docs/ARCHITECTURE.md
// §9): the sessions Manager writes them as it starts, restarts and stops
// agents, and clean-up reads and removes them.
package records

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// ErrNoSession: the issue has no session record.
var ErrNoSession = errors.New("no agent session")

// ExitKind says why an agent's process ended; sessions.Classify tells
// the kinds apart.
type ExitKind string

// Session is what agenttree keeps of an issue's agent session.
type Session struct {
	Issue int         `yaml:"issue" json:"issue"`
	Role  stages.Role `yaml:"role" json:"role"`
	Agent string      `yaml:"agent" json:"agent"`
	// Session is the tmux session's name, Socket its server's (empty:
	// the default server), Pane the pane the agent runs in.
	Session string `yaml:"session" json:"session"`
	Socket  string `yaml:"socket,omitempty" json:"socket,omitempty"`
	Pane    string `yaml:"pane" json:"pane"`
	// PanePID is the process tmux started in Pane: the agent. A pane
	// whose process is another (respawned, replaced) runs a program
	// agenttree did not start, and is typed nothing into.
	PanePID  int    `yaml:"pane_pid,omitempty" json:"pane_pid,omitempty"`
	Worktree string `yaml:"worktree" json:"worktree"`
	// Clone: Worktree is the agent's own clone (an agent of another OS
	// user, or in a container), not a linked worktree of the host's
	// repository.
	Clone  bool   `yaml:"clone,omitempty" json:"clone,omitempty"`
	Branch string `yaml:"branch" json:"branch"`
	// Sandbox is where the agent runs (none, user:NAME, docker:IMAGE,
	// podman:IMAGE).
	Sandbox string    `yaml:"sandbox" json:"sandbox"`
	Started time.Time `yaml:"started" json:"started"`
	// Restarts counts the times the agent was started again since
	// Started (the controller's, not a person's --restart).
	Restarts int `yaml:"restarts" json:"restarts"`
	// Stopped is when a person stopped the session; zero while it runs.
	Stopped time.Time `yaml:"stopped,omitempty" json:"stopped,omitzero"`
	// What the controller keeps to keep the agent alive (sessions/keepalive).
	// Fallbacks counts the times the role's fallback replaced the agent.
	Fallbacks int `yaml:"fallbacks,omitempty" json:"fallbacks,omitempty"`
	// LastExit is why the agent last ended, as sessions.Classify said.
	LastExit ExitKind `yaml:"last_exit,omitempty" json:"last_exit,omitempty"`
	// RateLimited counts the rate-limit waits in a row; RetryAt is when
	// the one under way ends.
	RateLimited int       `yaml:"rate_limited,omitempty" json:"rate_limited,omitempty"`
	RetryAt     time.Time `yaml:"retry_at,omitempty" json:"retry_at,omitzero"`
	// Screen is a digest of what the pane showed when it last changed,
	// at ChangedAt; NudgedAt is when a stall was last pointed out to the
	// agent.
	Screen    string    `yaml:"screen,omitempty" json:"-"`
	ChangedAt time.Time `yaml:"changed_at,omitempty" json:"changed_at,omitzero"`
	NudgedAt  time.Time `yaml:"nudged_at,omitempty" json:"nudged_at,omitzero"`
	// TokenHash names the session's token among the stored hashes (the
	// token itself is kept nowhere), so stopping revokes it.
	TokenHash string `yaml:"token_hash" json:"-"`
}

// Store reads and writes the session records of one state directory.
type Store struct{ layout statedir.Layout }

// Open is the store of the records under layout.
func Open(layout statedir.Layout) Store { return Store{layout: layout} }

// Get is issue id's record; ErrNoSession when it has none.
func (s Store) Get(id int) (*Session, error) {
	var rec Session
	err := atomicfile.ReadYAML(s.layout.AgentSession(id), &rec)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("issue %d: %w; start one with `agenttree start %d`", id, ErrNoSession, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read the session record of issue %d: %w", id, err)
	}
	return &rec, nil
}

// Put writes rec as its issue's record.
func (s Store) Put(rec *Session) error {
	if err := os.MkdirAll(s.layout.AgentSessions(), statedir.HostMode); err != nil {
		return err
	}
	if err := atomicfile.WriteYAML(s.layout.AgentSession(rec.Issue), rec, 0o644); err != nil {
		return fmt.Errorf("record the session of issue %d: %w", rec.Issue, err)
	}
	return nil
}

// Remove removes issue id's record; one already gone is no error.
func (s Store) Remove(id int) error {
	if err := os.Remove(s.layout.AgentSession(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// List reads every record, by issue; one that cannot be read is an error
// naming it, the others still returned.
func (s Store) List() ([]*Session, error) {
	names, err := filepath.Glob(filepath.Join(s.layout.AgentSessions(), "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []*Session
	var errs []error
	for _, name := range names {
		var rec Session
		if err := atomicfile.ReadYAML(name, &rec); err != nil {
			errs = append(errs, fmt.Errorf("session record %s: %w", name, err))
			continue
		}
		out = append(out, &rec)
	}
	return out, errors.Join(errs...)
}
