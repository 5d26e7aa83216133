package engine_test

import (
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
)

// registry is the hook registry the engine tests run: every built-in hook.
func registry() *hooks.Registry { return builtin.Registry() }
