package textsafe

import (
	"strconv"
	"strings"
	"unicode"
)

// Name is a name from outside the program (a file, a branch, a check) as
// a message shows it: as it is when it is plain text, else quoted in Go's
// %q style, so that a newline, a control character or shell syntax in it
// reads as part of the name, on the same line, never as more of the
// message (docs/SECURITY.md).
func Name(s string) string {
	if plain(s) {
		return s
	}
	return strconv.Quote(s)
}

// Names is Name of each of names, joined by ", ".
func Names(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Name(n)
	}
	return strings.Join(out, ", ")
}

// plain reports whether s reads the same shown as it is: not empty, no
// space at its ends, only printable characters, nothing a shell or a
// Markdown reader would take as syntax, and no comma (names are listed
// with commas).
func plain(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || strings.ContainsRune("`$\\\"',;|&<>(){}", r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

// OneLine is text from outside the program made one line of a message:
// terminal controls removed (Sanitize), and newlines, tabs and other
// control characters shown escaped (`\n`), so that a line it holds cannot
// pass for a line of the message.
func OneLine(text string) string {
	text = strings.TrimSpace(Sanitize(text))
	if !strings.ContainsFunc(text, unicode.IsControl) {
		return text
	}
	// Only the controls are escaped: quotes and backslashes stay as
	// written.
	var b strings.Builder
	for _, r := range text {
		if unicode.IsControl(r) {
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
