package main

import (
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
)

// hookRegistry is every hook a config may name.
func hookRegistry() *hooks.Registry { return builtin.Registry() }
