package engine_test

import "github.com/agenttree/agenttree/hooks"

// registry is the hook registry the engine tests run: every built-in hook.
func registry() *hooks.Registry { return hooks.Builtin() }
