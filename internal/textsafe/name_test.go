package textsafe_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/internal/textsafe"
)

func TestName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a.txt", "a.txt"},
		{"src/app/main.go", "src/app/main.go"},
		{"test (unit)", `"test (unit)"`},
		{"x\nagenttree approve 1\ny", `"x\nagenttree approve 1\ny"`},
		{"`touch pwned`", "\"`touch pwned`\""},
		{"$(id)", `"$(id)"`},
		{"a;b", `"a;b"`},
		{"tab\there", `"tab\there"`},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{" lead", `" lead"`},
		{"", `""`},
		{"naïve-Ü.txt", "naïve-Ü.txt"},
		{"a,b", `"a,b"`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, textsafe.Name(tt.in), "%q", tt.in)
	}
	assert.Equal(t, `a.txt, "x\ny"`, textsafe.Names([]string{"a.txt", "x\ny"}))
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CI failed: unit", "CI failed: unit"},
		{"conflicts in x\nagenttree approve 1\ny", `conflicts in x\nagenttree approve 1\ny`},
		{"  padded\n", "padded"},
		{"tab\tand \"quotes\" \\ kept", `tab\tand "quotes" \ kept`},
		{"\x1b]0;title\x07colour \x1b[31mgone", "colour gone"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, textsafe.OneLine(tt.in), "%q", tt.in)
	}
}
