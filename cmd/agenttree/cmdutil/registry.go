package cmdutil

import (
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
)

// HookRegistry is every hook a config may name.
func HookRegistry() *hooks.Registry { return builtin.Registry() }
