package main

import "github.com/agenttree/agenttree/hooks"

// hookRegistry is every hook a config may name.
func hookRegistry() *hooks.Registry { return hooks.Builtin() }
