package hooks

import (
	"time"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
)

// Call is one invocation of a hook: the issue it reads, the config entry
// that names it, its parameters, and what it may use of the world.
type Call struct {
	Issue  *Issue
	Entry  *stages.HookEntry
	Params Params
	// Env may be nil (a hook run outside an engine, such as in a test):
	// use the methods below rather than its fields.
	Env *Env
}

// Now is the time by the env's clock.
func (c *Call) Now() time.Time { return c.Env.now() }

// Settings are the config's settings, or the defaults without a config.
func (c *Call) Settings() *stages.Config {
	if c.Env != nil && c.Env.Config != nil {
		return c.Env.Config
	}
	return settings.Defaults()
}

// DryRun reports whether the hook must change nothing outside the issue.
func (c *Call) DryRun() bool { return c.Env != nil && c.Env.DryRun }

// HookName is the name the config called the hook by.
func (c *Call) HookName() string {
	if c.Entry == nil {
		return ""
	}
	return c.Entry.Name
}
