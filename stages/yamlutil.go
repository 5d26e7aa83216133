package stages

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

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

// syntaxPos pulls the line out of a yaml.v3 syntax error.
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
