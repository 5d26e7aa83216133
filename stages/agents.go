package stages

import (
	"path/filepath"
	"slices"
	"time"
)

// Agent is a program that works on issues in a tmux session (`agents:`).
type Agent struct {
	Name string
	Pos  Pos
	// Command starts the agent, a shell command run in the issue's
	// worktree.
	Command string
	// ResumeCommand starts it again after it exited, continuing its
	// conversation; empty: Command.
	ResumeCommand string
}

// Fallback is what a role does when an agent has spent its restarts.
type Fallback string

const (
	// FallbackNextInList starts the role's next agent.
	FallbackNextInList Fallback = "next_in_list"
	// FallbackSameAgent starts the same agent afresh.
	FallbackSameAgent Fallback = "same_agent"
	// FallbackFail calls a person.
	FallbackFail Fallback = "fail"
)

// Fallbacks lists the fallbacks in the order they are documented.
func Fallbacks() []Fallback {
	return []Fallback{FallbackNextInList, FallbackSameAgent, FallbackFail}
}

// RoleSessions says how the sessions of a role's agents run (`roles:`):
// which agents, in the order they are tried, and how far the controller
// goes to keep one alive.
type RoleSessions struct {
	Role Role
	Pos  Pos
	// Agents name entries of Config.Agents; the first is started.
	Agents   []string
	Fallback Fallback
	// MaxRestarts bounds the restarts of one agent before Fallback.
	MaxRestarts int
	// StallAfter is how long an agent may show no change before it is
	// nudged; zero: never.
	StallAfter time.Duration
	// AutoStart has the controller start a session when an issue enters
	// a stage of the role.
	AutoStart bool
}

// Worktrees says where issues' worktrees are (`worktrees:`).
type Worktrees struct {
	// Dir is a template over {{project}}, relative to the config file's
	// directory.
	Dir string
}

// Agent is the agent named name.
func (c *Config) Agent(name string) (*Agent, bool) {
	i := slices.IndexFunc(c.Agents, func(a *Agent) bool { return a.Name == name })
	if i < 0 {
		return nil, false
	}
	return c.Agents[i], true
}

// AgentNames lists the agents in the order they are declared.
func (c *Config) AgentNames() []string {
	out := make([]string, len(c.Agents))
	for i, a := range c.Agents {
		out[i] = a.Name
	}
	return out
}

// Sessions is how role's sessions run; false when `roles:` has no entry
// for it, and so no agent sessions.
func (c *Config) Sessions(role Role) (*RoleSessions, bool) {
	i := slices.IndexFunc(c.Roles, func(r *RoleSessions) bool { return r.Role == role })
	if i < 0 {
		return nil, false
	}
	return c.Roles[i], true
}

// ProjectName is the project's name: `project:`, else the name of the
// directory the config file is in.
func (c *Config) ProjectName() string {
	if c.Project != "" {
		return c.Project
	}
	return filepath.Base(filepath.Dir(c.File))
}

// WorktreesDir is the directory issues' worktrees are made in, absolute
// when the config file's path is.
func (c *Config) WorktreesDir() string {
	dir := Render(c.Worktrees.Dir, map[string]string{"project": c.ProjectName()})
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(filepath.Dir(c.File), dir)
}
