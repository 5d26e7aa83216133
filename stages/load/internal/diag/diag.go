// Package diag collects the diagnostics of reading one config file, each
// at its file:line:col with a hint, in the manner of go/scanner's
// ErrorList; and reads YAML values, reporting where one cannot be read.
package diag

import (
	"cmp"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
)

// Collector collects the diagnostics of reading one file.
type Collector struct {
	File string
	// Lax makes what the earlier tool let pass (unknown keys, options and
	// hooks; flows that strand an issue) warnings instead of errors, since
	// files written for it carry its keys and hooks. The compatible form's
	// pass sets it; nothing else asks which form a file is in.
	Lax    bool
	list   []stages.Diagnostic
	errors int
	// names are the settings values stand for (`ci_polling.max_retries`),
	// so that a value's readers can say which one is wrong.
	names map[*yaml.Node]string
}

// Name records that n is the value of the setting name: the errors of
// the readers below then begin with it.
func (d *Collector) Name(n *yaml.Node, name string) {
	if d.names == nil {
		d.names = map[*yaml.Node]string{}
	}
	d.names[n] = name
}

// Errors counts the errors reported so far: a reader compares counts to
// tell whether what it read had any.
func (d *Collector) Errors() int { return d.errors }

// Pos is where n is written.
func (d *Collector) Pos(n *yaml.Node) stages.Pos {
	return stages.Pos{File: d.File, Line: n.Line, Col: n.Column}
}

func (d *Collector) add(pos stages.Pos, sev stages.Severity, hint, msg string) {
	d.list = append(d.list, stages.Diagnostic{Pos: pos, Severity: sev, Msg: msg, Hint: hint})
	if sev == stages.SevError {
		d.errors++
	}
}

// Add reports x, found by another collector.
func (d *Collector) Add(x stages.Diagnostic) { d.add(x.Pos, x.Severity, x.Hint, x.Msg) }

// Errorf reports an error at pos, with a hint ("" for none).
func (d *Collector) Errorf(pos stages.Pos, hint string, format string, args ...any) {
	d.add(pos, stages.SevError, hint, fmt.Sprintf(format, args...))
}

// Warnf reports a warning at pos, with a hint ("" for none).
func (d *Collector) Warnf(pos stages.Pos, hint string, format string, args ...any) {
	d.add(pos, stages.SevWarning, hint, fmt.Sprintf(format, args...))
}

// Tolerable is a problem the earlier tool let pass, worded both ways: as
// the error the canonical form reports, and as the warning the compatible
// form gives, which says what happens instead.
type Tolerable struct {
	Msg, Hint string
	// LaxMsg and LaxHint word the warning; "" means the same as the error.
	LaxMsg, LaxHint string
}

// Tolerate reports t: a warning in a lax read, else an error. It returns
// which, for a caller that keeps what it read only when it was a warning.
func (d *Collector) Tolerate(pos stages.Pos, t Tolerable) stages.Severity {
	if !d.Lax {
		d.add(pos, stages.SevError, t.Hint, t.Msg)
		return stages.SevError
	}
	d.add(pos, stages.SevWarning, cmp.Or(t.LaxHint, t.Hint), cmp.Or(t.LaxMsg, t.Msg))
	return stages.SevWarning
}

// UnknownKey reports a key nobody reads, in the place named where. known
// feeds the suggestion when hint is empty.
func (d *Collector) UnknownKey(k *yaml.Node, where string, known []string, hint string) {
	if hint == "" {
		hint = Suggest(k.Value, known)
	}
	d.Tolerate(d.Pos(k), Tolerable{
		Msg:    fmt.Sprintf("unknown key `%s` in %s", k.Value, where),
		LaxMsg: fmt.Sprintf("unknown key `%s` in %s is ignored", k.Value, where),
		Hint:   hint,
	})
}

// Split orders the diagnostics by position and parts errors from warnings.
func (d *Collector) Split() (errs, warns []stages.Diagnostic) {
	slices.SortStableFunc(d.list, func(a, b stages.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	for _, x := range d.list {
		if x.Severity == stages.SevError {
			errs = append(errs, x)
		} else {
			warns = append(warns, x)
		}
	}
	return errs, warns
}

// Suggest returns a "did you mean" hint for the known name closest to got
// (stages.Closest), or "" when nothing is close enough to be a likely typo.
func Suggest(got string, known []string) string {
	best := stages.Closest(got, known)
	if best == "" {
		return ""
	}
	return fmt.Sprintf("did you mean `%s`?", best)
}
