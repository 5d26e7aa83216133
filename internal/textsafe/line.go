package textsafe

import (
	"strings"
	"unicode/utf8"
)

// Line is text as one line of a terminal, at most max runes long: what
// Sanitize keeps, each run of white space (newlines and tabs included)
// one space, trimmed, and cut by Clip.
func Line(text string, max int) string {
	return Clip(strings.Join(strings.Fields(Sanitize(text)), " "), max)
}

// Clip shortens s to at most max runes, the last one "…" when it cut
// anything; "" when max is below one.
func Clip(s string, max int) string {
	switch {
	case max < 1:
		return ""
	case utf8.RuneCountInString(s) <= max:
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}
