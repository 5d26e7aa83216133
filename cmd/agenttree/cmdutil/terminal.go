package cmdutil

import (
	"github.com/agenttree/agenttree/internal/colour"
	"github.com/agenttree/agenttree/internal/progress"
)

// Spin shows on a terminal that the command waits for what, once that
// takes more than a second; Stop it before printing what came of it.
func (a *App) Spin(what string) *progress.Spinner {
	return progress.Start(a.ErrOut, progress.Terminal(a.ErrOut, a.Getenv), what)
}

// Paint is the painter of what the command prints on its standard
// output: colour for a person at a terminal, never with NO_COLOR.
func (a *App) Paint() colour.Painter { return colour.For(a.Out, a.Getenv) }
