package diag

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// The readers below decode a value into dst, or report why they cannot
// and leave dst alone, as the flag package's XxxVar functions do.

// StringVar reads a string.
func (d *Collector) StringVar(n *yaml.Node, dst *string) bool {
	return readInto(d, n, dst, yamlnode.String)
}

// StringsVar reads a list of strings (a single string is a list of one).
func (d *Collector) StringsVar(n *yaml.Node, dst *[]string) bool {
	if n.Kind == yaml.ScalarNode {
		var one string
		if !d.StringVar(n, &one) {
			return false
		}
		*dst = []string{one}
		return true
	}
	return readInto(d, n, dst, func(n *yaml.Node) ([]string, error) {
		var v []string
		err := n.Decode(&v)
		return v, err
	})
}

// BoolVar reads true or false.
func (d *Collector) BoolVar(n *yaml.Node, dst *bool) bool {
	return readInto(d, n, dst, yamlnode.Bool)
}

// IntVar reads a whole number.
func (d *Collector) IntVar(n *yaml.Node, dst *int) bool {
	return readInto(d, n, dst, yamlnode.Int)
}

// DurationVar reads a duration: seconds, or a Go duration.
func (d *Collector) DurationVar(n *yaml.Node, dst *time.Duration) bool {
	return readInto(d, n, dst, yamlnode.Duration)
}

// PositiveDurationVar is DurationVar that must be more than zero: a zero poll
// interval would spin.
func (d *Collector) PositiveDurationVar(n *yaml.Node, dst *time.Duration) bool {
	if !d.DurationVar(n, dst) {
		return false
	}
	if *dst <= 0 {
		d.Errorf(d.Pos(n), "use at least 1", "this interval must be more than 0 seconds")
		return false
	}
	return true
}

func readInto[T any](d *Collector, n *yaml.Node, dst *T, decode func(*yaml.Node) (T, error)) bool {
	v, err := decode(n)
	if err != nil {
		msg := err.Error()
		if name := d.names[n]; name != "" {
			msg = name + ": " + msg
		}
		d.Errorf(d.Pos(n), unquoteHint(n, decode), "%s", msg)
		return false
	}
	*dst = v
	return true
}

// unquoteHint says to drop the quotes of a value that, unquoted, would
// be read: `"5"` for a number.
func unquoteHint[T any](n *yaml.Node, decode func(*yaml.Node) (T, error)) string {
	if n.Kind != yaml.ScalarNode || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		return ""
	}
	var bare yaml.Node
	if yaml.Unmarshal([]byte(n.Value), &bare) != nil || len(bare.Content) != 1 {
		return ""
	}
	if _, err := decode(bare.Content[0]); err != nil {
		return ""
	}
	return "write it without quotes: " + n.Value
}

// OneOf reads a value that must be one of allowed, named what in the
// error. dst takes the value even when it is not allowed: the error
// rejects the file anyway.
func OneOf[T ~string](d *Collector, n *yaml.Node, dst *T, what string, allowed ...T) {
	var s string
	if !d.StringVar(n, &s) {
		return
	}
	*dst = T(s)
	if !slices.Contains(allowed, *dst) {
		d.Errorf(d.Pos(n), "use "+OrList(allowed), "unknown %s %q", what, s)
	}
}

// Condition reads a condition, or reports why it does not parse, with
// hint.
func (d *Collector) Condition(n *yaml.Node, hint string) *stages.Condition {
	var src string
	if !d.StringVar(n, &src) {
		return nil
	}
	c, err := stages.ParseCondition(src)
	if err != nil {
		d.Errorf(conditionPos(d.Pos(n), n, err), hint, "%s", err)
		return nil
	}
	c.Pos = d.Pos(n)
	return c
}

// IsMap reports whether n, the value of key what, is a mapping, and an
// error when it is not.
func (d *Collector) IsMap(n *yaml.Node, what string) bool {
	if n.Kind != yaml.MappingNode {
		d.Errorf(d.Pos(n), "", "`%s` must be a mapping, got %s", what, yamlnode.Describe(n))
		return false
	}
	return true
}

// OrList spells alternatives for a message: "`text` or `values`".
func OrList[T ~string](names []T) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + string(n) + "`"
	}
	if len(q) <= 2 {
		return strings.Join(q, " or ")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// IntAtLeast reads a whole number of at least min; what names the setting
// in the error.
func (d *Collector) IntAtLeast(n *yaml.Node, dst *int, min int, what string) bool {
	return atLeast(d, n, dst, min, what, d.IntVar)
}

// DurationAtLeast reads a duration of at least min; what names the setting
// in the error.
func (d *Collector) DurationAtLeast(n *yaml.Node, dst *time.Duration, min time.Duration, what string) bool {
	return atLeast(d, n, dst, min, what, d.DurationVar)
}

func atLeast[T int | time.Duration](d *Collector, n *yaml.Node, dst *T, min T, what string, read func(*yaml.Node, *T) bool) bool {
	var v T
	if !read(n, &v) {
		return false
	}
	if v < min {
		d.Errorf(d.Pos(n), fmt.Sprintf("use %v or more", min), "%s must be at least %v, got %v", what, min, v)
		return false
	}
	*dst = v
	return true
}

// conditionPos is where in the file a condition's parse error is: at the
// token the parser stopped at, when the condition is written on its own
// line as a plain or quoted scalar; else at the condition.
func conditionPos(pos stages.Pos, n *yaml.Node, err error) stages.Pos {
	var ce *stages.ConditionError
	if !errors.As(err, &ce) || ce.Offset < 0 || strings.Contains(n.Value, "\n") {
		return pos
	}
	switch n.Style {
	case 0:
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		if strings.ContainsAny(ce.Src, `\'"`) {
			return pos // escapes: the columns no longer line up
		}
		pos.Col++ // the opening quote
	default:
		return pos
	}
	pos.Col += utf8.RuneCountInString(ce.Src[:min(ce.Offset, len(ce.Src))])
	return pos
}
