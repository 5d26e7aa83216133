// Package yamlnode reads yaml.v3 node trees, which keep where each value
// is written: mappings in file order, scalars decoded by their tag, keys
// given twice, and a node described the way a message names it.
package yamlnode

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Pair is one entry of a mapping.
type Pair struct {
	Key, Val *yaml.Node
}

// Pairs lists a mapping's entries in file order; nil for anything else.
func Pairs(n *yaml.Node) []Pair {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]Pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, Pair{n.Content[i], n.Content[i+1]})
	}
	return out
}

// ScalarAt makes a scalar standing where n stands: a value written in
// another spelling keeps the position of what the file wrote.
func ScalarAt(n *yaml.Node, tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, Line: n.Line, Column: n.Column}
}

// IsNull reports whether n is missing or written as nothing.
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// Describe names what n is, for messages: "a list", or a scalar quoted.
func Describe(n *yaml.Node) string {
	switch {
	case IsNull(n):
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

// String reads a scalar that is not null.
func String(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || IsNull(n) {
		return "", fmt.Errorf("expected a string, got %s", Describe(n))
	}
	return n.Value, nil
}

// Bool reads true or false.
func Bool(n *yaml.Node) (bool, error) {
	if n.Kind == yaml.ScalarNode {
		var b bool
		if n.Tag == "!!bool" && n.Decode(&b) == nil {
			return b, nil
		}
	}
	return false, fmt.Errorf("expected true or false, got %s", Describe(n))
}

// Int reads a whole number.
func Int(n *yaml.Node) (int, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.Atoi(n.Value)
		if err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("expected a whole number, got %s", Describe(n))
}

// Number reads an int or a float, as float64.
func Number(n *yaml.Node) (float64, error) {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		return 0, fmt.Errorf("expected a number, got %s", Describe(n))
	}
	return v, nil
}

// Duration reads a number of seconds or a Go duration ("90s", "5m"), not
// below zero.
func Duration(n *yaml.Node) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && !IsNull(n) {
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
	return 0, fmt.Errorf("expected a duration (seconds, or like \"90s\", \"5m\"), got %s", Describe(n))
}

// Strings reads a list of strings; a single string is a list of one.
func Strings(n *yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode && !IsNull(n) {
		return []string{n.Value}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("expected a list of strings, got %s", Describe(n))
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		s, err := String(c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Duplicate is a key given again in the mapping that holds First.
type Duplicate struct {
	Key, First *yaml.Node
}

// Duplicates lists, in file order, every key given twice in one mapping
// anywhere under n. yaml.v3 keeps both in the node tree, where reading it
// would silently use one of them. Merge keys (`<<`) are not keys of their
// own, and an alias is checked where its anchor is defined.
func Duplicates(n *yaml.Node) []Duplicate {
	var out []Duplicate
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || n.Kind == yaml.AliasNode {
			return
		}
		if n.Kind == yaml.MappingNode {
			seen := map[string]*yaml.Node{}
			for _, p := range Pairs(n) {
				if p.Key.Kind != yaml.ScalarNode || p.Key.Value == "<<" {
					continue
				}
				id := p.Key.ShortTag() + " " + p.Key.Value
				if first, dup := seen[id]; dup {
					out = append(out, Duplicate{Key: p.Key, First: first})
					continue
				}
				seen[id] = p.Key
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return out
}

// SyntaxLine pulls the line out of a yaml.v3 syntax error, which has no
// structured form; line is 0 when the message names none.
func SyntaxLine(err error) (line int, msg string) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, tail, _ := strings.Cut(rest, ":")
		if v, convErr := strconv.Atoi(num); convErr == nil {
			return v, strings.TrimSpace(tail)
		}
	}
	return 0, msg
}
