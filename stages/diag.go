package stages

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
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
// any error is rejected whole; Load never returns a partly valid Config.
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

// diags collects diagnostics during one load.
type diags struct {
	file string
	list []Diagnostic
}

func (d *diags) errorf(pos Pos, hint string, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Severity: SevError, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (d *diags) warnf(pos Pos, hint string, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Severity: SevWarning, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (d *diags) split() (errs, warns []Diagnostic) {
	sort.SliceStable(d.list, func(i, j int) bool {
		a, b := d.list[i].Pos, d.list[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	for _, x := range d.list {
		if x.Severity == SevError {
			errs = append(errs, x)
		} else {
			warns = append(warns, x)
		}
	}
	return errs, warns
}

// suggest returns a "did you mean" hint for the known name closest to got,
// or "" when nothing is close enough to be a likely typo.
func suggest(got string, known []string) string {
	best, bestDist := "", 1<<30
	for _, k := range known {
		d := levenshtein.ComputeDistance(got, k)
		if d < bestDist || (d == bestDist && k < best) {
			best, bestDist = k, d
		}
	}
	limit := len(got)/3 + 1
	if limit > 3 {
		limit = 3
	}
	if best == "" || bestDist > limit {
		return ""
	}
	return fmt.Sprintf("did you mean `%s`?", best)
}
