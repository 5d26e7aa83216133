package main

import (
	"github.com/agenttree/agenttree/internal/colour"
	"github.com/agenttree/agenttree/internal/progress"
)

// spin shows on a terminal that the command waits for what, once that
// takes more than a second; Stop it before printing what came of it.
func (a *app) spin(what string) *progress.Spinner {
	return progress.Start(a.err, progress.Terminal(a.err, a.getenv), what)
}

// paint is the painter of what the command prints on its standard
// output: colour for a person at a terminal, never with NO_COLOR.
func (a *app) paint() colour.Painter { return colour.For(a.out, a.getenv) }
