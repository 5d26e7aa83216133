package lines_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/internal/lines"
)

func TestFirst(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"one":          "one",
		"one\ntwo":     "one",
		"one\r\ntwo":   "one",
		"\nsecond":     "",
		"no newline\n": "no newline",
	} {
		assert.Equal(t, want, lines.First(in), "%q", in)
	}
}

func TestLast(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"\n\n  \n", 3, nil},
		{"a\nb\nc\n", 2, []string{"b", "c"}},
		{"a\r\nb\r\nc\r\n\r\n", 5, []string{"a", "b", "c"}},
		{"a\nb\nc", 0, []string{"a", "b", "c"}},
		{"a\n\nb", 2, []string{"", "b"}},
	} {
		assert.Equal(t, tt.want, lines.Last(tt.in, tt.n), "%q %d", tt.in, tt.n)
	}
	assert.Equal(t, "b\nc", lines.Tail("a\nb\nc\n", 2))
}
