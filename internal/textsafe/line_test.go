package textsafe_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/internal/textsafe"
)

func TestLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain text", "Add login page", 20, "Add login page"},
		{"window title escape", "Add \x1b]0;pwned\x07login", 20, "Add login"},
		{"bidi override", "invoice\u202efdp.exe", 20, "invoicefdp.exe"},
		{"newlines and tabs folded", "first line\nsecond\tline\r\nthird", 40, "first line second line third"},
		{"runs of space and the ends", "  a \n\n  b  ", 10, "a b"},
		{"cut to max runes", "ééééé", 4, "ééé…"},
		{"exactly max", "abcd", 4, "abcd"},
		{"cut after sanitising, so no sequence is split", "\x1b[31m" + strings.Repeat("x", 10) + "\x1b[0m", 10, strings.Repeat("x", 10)},
		{"nothing left", "\x1b[2J\n\t", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, textsafe.Line(tt.in, tt.max))
		})
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 4, "abc…"},
		{"日本語テキスト", 3, "日本…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
		{"", 3, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, textsafe.Clip(tt.in, tt.max), "%q to %d", tt.in, tt.max)
	}
}

func TestUnprintable(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{'\x00', '\n', '\t', '\r', '\x1b', '\x7f', '\u0085', '\u009b', '\u202a', '\u202e', '\u2066', '\u2069'} {
		assert.True(t, textsafe.Unprintable(r), "%U", r)
	}
	for _, r := range []rune{' ', 'a', 'é', '→', '日', '\u200b', '\ufffd'} {
		assert.False(t, textsafe.Unprintable(r), "%U", r)
	}
}
