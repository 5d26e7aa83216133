package stages

import (
	"fmt"
	"strings"
)

// Pos is a place in a config file.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Severity says whether a diagnostic stops the load.
type Severity string

const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
)

// Diagnostic is one problem found in a config file.
type Diagnostic struct {
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	Msg      string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
}

func (d Diagnostic) String() string {
	s := fmt.Sprintf("%s: %s: %s", d.Pos, d.Severity, d.Msg)
	if d.Hint != "" {
		s += " (" + d.Hint + ")"
	}
	return s
}

// LoadError holds every error found while loading a config. A config with
// any error is rejected whole: the loader never returns a partly valid
// Config.
type LoadError struct {
	Diagnostics []Diagnostic
}

func (e *LoadError) Error() string {
	lines := make([]string, 0, len(e.Diagnostics))
	for _, d := range e.Diagnostics {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}
