package yamlnode_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// value parses text as YAML and returns its one value.
func value(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(text), &doc))
	require.Len(t, doc.Content, 1)
	return doc.Content[0]
}

func TestDecoders(t *testing.T) {
	decoders := map[string]func(*yaml.Node) (any, error){
		"string":   func(n *yaml.Node) (any, error) { return yamlnode.String(n) },
		"bool":     func(n *yaml.Node) (any, error) { return yamlnode.Bool(n) },
		"int":      func(n *yaml.Node) (any, error) { return yamlnode.Int(n) },
		"number":   func(n *yaml.Node) (any, error) { return yamlnode.Number(n) },
		"duration": func(n *yaml.Node) (any, error) { return yamlnode.Duration(n) },
		"strings":  func(n *yaml.Node) (any, error) { return yamlnode.Strings(n) },
	}
	tests := []struct {
		decoder, text string
		want          any
		err           string // "" when it decodes
	}{
		{"string", "review.md", "review.md", ""},
		{"string", "~", nil, "expected a string, got nothing"},
		{"string", "[a]", nil, "expected a string, got a list"},
		{"bool", "true", true, ""},
		{"bool", "yes please", nil, `expected true or false, got "yes please"`},
		{"bool", `"true"`, nil, `expected true or false, got "true"`},
		{"int", "42", 42, ""},
		{"int", "4.5", nil, `expected a whole number, got "4.5"`},
		{"number", "4.5", 4.5, ""},
		{"number", "7", 7.0, ""},
		{"number", "{a: 1}", nil, "expected a number, got a mapping"},
		{"duration", "90", 90 * time.Second, ""},
		{"duration", "1.5", 1500 * time.Millisecond, ""},
		{"duration", "5m", 5 * time.Minute, ""},
		{"duration", "-1", nil, `expected a duration (seconds, or like "90s", "5m"), got "-1"`},
		{"duration", "soon", nil, `expected a duration (seconds, or like "90s", "5m"), got "soon"`},
		{"strings", "[a, b]", []string{"a", "b"}, ""},
		{"strings", "one", []string{"one"}, ""},
		{"strings", "[a, [b]]", nil, "expected a string, got a list"},
		{"strings", "{a: b}", nil, "expected a list of strings, got a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.decoder+" "+tt.text, func(t *testing.T) {
			got, err := decoders[tt.decoder](value(t, tt.text))
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPairsKeepFileOrder(t *testing.T) {
	var keys []string
	for _, p := range yamlnode.Pairs(value(t, "b: 1\na: 2\nc: 3\n")) {
		keys = append(keys, p.Key.Value)
	}
	assert.Equal(t, []string{"b", "a", "c"}, keys)
	assert.Nil(t, yamlnode.Pairs(value(t, "[a, b]")), "a list has no pairs")
}

func TestDuplicates(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // "line:col of the key, line:col of the first"
	}{
		{"none", "a: 1\nb: {a: 2}\n", nil},
		{"top level, twice again", "a: 1\nb: 2\na: 3\na: 4\n", []string{"3:1 1:1", "4:1 1:1"}},
		{"nested, in file order", "x: {k: 1, k: 2}\ny:\n  - {k: 1, k: 2}\n", []string{"1:11 1:5", "3:12 3:6"}},
		{"a key and its string spelling differ by tag", "1: a\n\"1\": b\n", nil},
		{"merge keys are not keys", "base: &b {k: 1}\nuse:\n  <<: *b\n  <<: *b\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range yamlnode.Duplicates(value(t, tt.text)) {
				got = append(got, pos(d.Key)+" "+pos(d.First))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func pos(n *yaml.Node) string { return fmt.Sprintf("%d:%d", n.Line, n.Column) }

func TestSyntaxLine(t *testing.T) {
	var doc yaml.Node
	err := yaml.Unmarshal([]byte("a: 1\nb: [\n"), &doc)
	require.Error(t, err)
	line, msg := yamlnode.SyntaxLine(err)
	assert.Equal(t, 2, line)
	assert.Equal(t, "did not find expected node content", msg)

	line, msg = yamlnode.SyntaxLine(errors.New("yaml: something odd"))
	assert.Equal(t, 0, line)
	assert.Equal(t, "something odd", msg)
}
