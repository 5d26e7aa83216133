package stages

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// parse reads the file as YAML, keeping positions, and returns its
// top-level mapping, or nil when there is none to read.
func parse(d *diags, data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		pos, msg := syntaxPos(d.file, err)
		d.errorf(pos, "fix the YAML syntax", "%s", msg)
		return nil
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		d.errorf(Pos{File: d.file, Line: 1, Col: 1}, "run `agenttree init` for a starter config", "the config is empty")
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		d.errorf(d.pos(root), "", "the config must be a mapping of keys such as `stages:` and `flows:`, got %s", kindName(root))
		return nil
	}
	duplicateKeys(d, root)
	return root
}

// duplicateKeys reports every key given twice in one mapping. yaml.v3 keeps
// both in the node tree, and reading it would silently use one of them.
func duplicateKeys(d *diags, n *yaml.Node) {
	if n == nil || n.Kind == yaml.AliasNode {
		return // the anchored node is checked where it is defined
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]*yaml.Node{}
		for _, p := range pairs(n) {
			if p.key.Kind != yaml.ScalarNode || p.key.Value == "<<" {
				continue
			}
			id := p.key.ShortTag() + " " + p.key.Value
			if first, dup := seen[id]; dup {
				d.errorf(d.pos(p.key), "keep one of them, merging what each says", "duplicate key `%s` (the first is at %s)", p.key.Value, d.pos(first))
				continue
			}
			seen[id] = p.key
		}
	}
	for _, c := range n.Content {
		duplicateKeys(d, c)
	}
}

// syntaxPos pulls the line out of a yaml.v3 syntax error, which has no
// structured form.
func syntaxPos(file string, err error) (Pos, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, tail, _ := strings.Cut(rest, ":")
		if v, convErr := strconv.Atoi(num); convErr == nil {
			line = v
			msg = strings.TrimSpace(tail)
		}
	}
	return Pos{File: file, Line: line, Col: 1}, msg
}

type pair struct {
	key, val *yaml.Node
}

// pairs lists a mapping's entries in file order.
func pairs(n *yaml.Node) []pair {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{n.Content[i], n.Content[i+1]})
	}
	return out
}

// scalarAt makes a scalar standing where n stands: a value a pass writes
// in the canonical spelling keeps the position of what the file wrote.
func scalarAt(n *yaml.Node, tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, Line: n.Line, Column: n.Column}
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func kindName(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}

func scalarString(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return "", fmt.Errorf("expected a string, got %s", kindName(n))
	}
	return n.Value, nil
}

func scalarBool(n *yaml.Node) (bool, error) {
	if n.Kind == yaml.ScalarNode {
		var b bool
		if n.Tag == "!!bool" && n.Decode(&b) == nil {
			return b, nil
		}
	}
	return false, fmt.Errorf("expected true or false, got %s", kindName(n))
}

func scalarInt(n *yaml.Node) (int, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.Atoi(n.Value)
		if err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("expected a whole number, got %s", kindName(n))
}

// scalarNumber accepts an int or a float, as float64.
func scalarNumber(n *yaml.Node) (float64, error) {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		return 0, fmt.Errorf("expected a number, got %s", kindName(n))
	}
	return v, nil
}

// scalarDuration accepts a number of seconds or a Go duration ("90s", "5m").
func scalarDuration(n *yaml.Node) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		if n.Tag == "!!int" || n.Tag == "!!float" {
			f, err := strconv.ParseFloat(n.Value, 64)
			if err == nil && f >= 0 {
				return time.Duration(f * float64(time.Second)), nil
			}
		}
		if d, err := time.ParseDuration(n.Value); err == nil && d >= 0 {
			return d, nil
		}
	}
	return 0, fmt.Errorf("expected a duration (seconds, or like \"90s\", \"5m\"), got %s", kindName(n))
}

func stringList(n *yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		return []string{n.Value}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("expected a list of strings, got %s", kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		s, err := scalarString(c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// The readers below decode a value into dst, or report why they cannot
// and leave dst alone, as the flag package's XxxVar functions do.

func (d *diags) str(n *yaml.Node, dst *string) bool {
	return readInto(d, n, dst, scalarString)
}

func (d *diags) boolean(n *yaml.Node, dst *bool) bool {
	return readInto(d, n, dst, scalarBool)
}

func (d *diags) integer(n *yaml.Node, dst *int) bool {
	return readInto(d, n, dst, scalarInt)
}

func (d *diags) seconds(n *yaml.Node, dst *time.Duration) bool {
	return readInto(d, n, dst, scalarDuration)
}

// positiveSeconds is seconds that must be more than zero: a zero poll
// interval would spin.
func (d *diags) positiveSeconds(n *yaml.Node, dst *time.Duration) {
	d.seconds(n, dst)
	if *dst <= 0 {
		d.errorf(d.pos(n), "use at least 1", "this interval must be more than 0 seconds")
	}
}

func readInto[T any](d *diags, n *yaml.Node, dst *T, decode func(*yaml.Node) (T, error)) bool {
	v, err := decode(n)
	if err != nil {
		d.errorf(d.pos(n), "", "%s", err)
		return false
	}
	*dst = v
	return true
}

// condition reads a condition, or reports why it does not parse.
func (d *diags) condition(n *yaml.Node, hint string) *Condition {
	var src string
	if !d.str(n, &src) {
		return nil
	}
	c, err := ParseCondition(src)
	if err != nil {
		d.errorf(d.pos(n), hint, "%s", err)
		return nil
	}
	c.Pos = d.pos(n)
	return c
}

func (d *diags) isMap(n *yaml.Node, what string) bool {
	if n.Kind != yaml.MappingNode {
		d.errorf(d.pos(n), "", "`%s` must be a mapping, got %s", what, kindName(n))
		return false
	}
	return true
}
