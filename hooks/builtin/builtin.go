// Package builtin assembles every hook agenttree ships into one registry:
// the one a config is loaded against and the engine runs.
package builtin

import (
	"slices"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/branch"
	"github.com/agenttree/agenttree/hooks/docs"
	"github.com/agenttree/agenttree/hooks/message"
	"github.com/agenttree/agenttree/hooks/move"
	"github.com/agenttree/agenttree/hooks/pr"
	"github.com/agenttree/agenttree/hooks/shell"
)

// Registry returns a registry holding every built-in hook.
func Registry() *hooks.Registry {
	r := hooks.NewRegistry(slices.Concat(docs.Defs(), shell.Defs(), move.Defs(), message.Defs(), branch.Defs(), pr.Defs())...)
	// The earlier tool's name for the same gate.
	r.Alias("ci_check", "pr_ci_passed")
	return r
}
