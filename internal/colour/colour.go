// Package colour paints a command's words for a person at a terminal: only
// when the stream is a terminal, and never with NO_COLOR set
// (https://no-color.org), so what programs and logs read stays plain.
package colour

import (
	"io"

	"github.com/agenttree/agenttree/internal/progress"
)

// Painter paints text, or leaves it as it is when it is off.
type Painter struct{ on bool }

// For is the painter of w: on when w is a terminal and NO_COLOR is unset
// or empty.
func For(w io.Writer, getenv func(string) string) Painter {
	return Painter{on: getenv("NO_COLOR") == "" && progress.Terminal(w, getenv)}
}

// On is a painter that always paints, for tests of what it paints.
func On() Painter { return Painter{on: true} }

func (p Painter) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Good is for what went through: a move, a pass.
func (p Painter) Good(s string) string { return p.paint("32", s) }

// Warn is for what waits on someone: a gate that failed, a warning.
func (p Painter) Warn(s string) string { return p.paint("33", s) }

// Bad is for what needs a person: an error, a step back, an escalation.
func (p Painter) Bad(s string) string { return p.paint("31", s) }

// Faint is for what matters less: times, ids beside names.
func (p Painter) Faint(s string) string { return p.paint("2", s) }
