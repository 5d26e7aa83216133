package stages

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
	"gopkg.in/yaml.v3"
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

// diags collects the diagnostics of one load.
type diags struct {
	file string
	list []Diagnostic
	// lax makes what the earlier tool let pass (unknown keys, options and
	// hooks; flows that strand an issue) warnings instead of errors, since
	// files written for it carry its keys and hooks. The compatible form's
	// pass sets it; nothing else asks which form a file is in.
	lax bool
}

func (d *diags) pos(n *yaml.Node) Pos {
	return Pos{File: d.file, Line: n.Line, Col: n.Column}
}

func (d *diags) errorf(pos Pos, hint string, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Severity: SevError, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (d *diags) warnf(pos Pos, hint string, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Severity: SevWarning, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// tolerable is a problem the earlier tool let pass, worded both ways: as
// the error the canonical form reports, and as the warning the compatible
// form gives, which says what happens instead.
type tolerable struct {
	msg, hint string
	// laxMsg and laxHint word the warning; "" means the same as the error.
	laxMsg, laxHint string
}

// tolerate reports t: a warning in a lax load, else an error. It returns
// which, for a caller that keeps what it read only when it was a warning.
func (d *diags) tolerate(pos Pos, t tolerable) Severity {
	if !d.lax {
		d.list = append(d.list, Diagnostic{Pos: pos, Severity: SevError, Msg: t.msg, Hint: t.hint})
		return SevError
	}
	msg, hint := t.msg, t.hint
	if t.laxMsg != "" {
		msg = t.laxMsg
	}
	if t.laxHint != "" {
		hint = t.laxHint
	}
	d.list = append(d.list, Diagnostic{Pos: pos, Severity: SevWarning, Msg: msg, Hint: hint})
	return SevWarning
}

// unknownKey reports a key nobody reads. known feeds the suggestion when
// hint is empty.
func (d *diags) unknownKey(k *yaml.Node, where string, known []string, hint string) {
	if hint == "" {
		hint = suggest(k.Value, known)
	}
	d.tolerate(d.pos(k), tolerable{
		msg:    fmt.Sprintf("unknown key `%s` in %s", k.Value, where),
		laxMsg: fmt.Sprintf("unknown key `%s` in %s is ignored", k.Value, where),
		hint:   hint,
	})
}

// split orders the diagnostics by position and parts errors from warnings.
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
// or "" when nothing is close enough to be a likely typo. It costs a
// comparison per known name: call it only with an error to report.
func suggest(got string, known []string) string {
	best, bestDist := "", 1<<30
	for _, k := range known {
		d := levenshtein.ComputeDistance(got, k)
		if d < bestDist || (d == bestDist && k < best) {
			best, bestDist = k, d
		}
	}
	limit := min(len(got)/3+1, 3)
	if best == "" || bestDist > limit {
		return ""
	}
	return fmt.Sprintf("did you mean `%s`?", best)
}
