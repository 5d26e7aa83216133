// Package textsafe makes text from outside the program safe to show in a
// terminal: nothing in it is acted on as a control (a cursor move, a
// window title, a clipboard write), and nothing reorders what a person
// reads (bidi overrides). Sanitize keeps the text's lines, for a pane;
// Line makes it one line of bounded length, for a table or a status.
package textsafe

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns text with nothing a terminal would act on, only what
// it would print: escape sequences (CSI, OSC, DCS, SOS, PM, APC and
// two-character escapes, in their 7-bit and C1 forms) are removed whole;
// other C0 and C1 control characters and DEL are removed except newline
// and tab; "\r\n" and a lone "\r" become "\n"; the bidirectional
// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make text
// read differently from what it is, are removed; invalid UTF-8 becomes
// U+FFFD.
//
// Sequences are recognised as the ECMA-48 parser of a VT terminal does
// (vt100.net/emu/dec_ansi_parser), with one difference: a control string
// (OSC, DCS, ...) that a newline interrupts ends there, so a stray
// introducer cannot swallow the rest of a message.
func Sanitize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	st := ground
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		next, keep, again := st.step(r)
		switch {
		case again:
			// r ended a sequence without being part of it: read it anew.
			st = next
			continue
		case keep && r == '\r':
			if !strings.HasPrefix(text[i+size:], "\n") {
				b.WriteByte('\n')
			}
		case keep:
			b.WriteRune(r)
		}
		st = next
		i += size
	}
	return b.String()
}

// parseState is where the parser is in a sequence.
type parseState int

const (
	ground        parseState = iota // text
	escape                          // after ESC
	escInter                        // after ESC and intermediate bytes
	csi                             // in a control sequence: ESC [ or U+009B
	ctrlString                      // in OSC, DCS, SOS, PM or APC
	ctrlStringEsc                   // ESC inside a control string: ST or a new sequence
)

// The C1 controls that open a sequence, as characters (U+0080–U+009F).
const (
	c1DCS = 0x90
	c1SOS = 0x98
	c1CSI = 0x9b
	c1ST  = 0x9c
	c1OSC = 0x9d
	c1PM  = 0x9e
	c1APC = 0x9f
)

// step reads r in state s: the next state, whether r is text to keep, and
// whether r must be read again in the next state (it is not part of the
// sequence it interrupted).
func (s parseState) step(r rune) (next parseState, keep, again bool) {
	switch s {
	case escape:
		return afterEscape(r)
	case escInter:
		return inSequence(r, 0x20, 0x2f, escInter)
	case csi:
		return inSequence(r, 0x20, 0x3f, csi)
	case ctrlString:
		return inControlString(r)
	case ctrlStringEsc:
		if r == '\\' {
			return ground, false, false
		}
		return escape, false, true
	}
	return inText(r)
}

func inText(r rune) (parseState, bool, bool) {
	switch {
	case r == '\n' || r == '\t' || r == '\r':
		return ground, true, false
	case r == 0x1b:
		return escape, false, false
	case r == c1CSI:
		return csi, false, false
	case r == c1DCS || r == c1SOS || r == c1OSC || r == c1PM || r == c1APC:
		return ctrlString, false, false
	}
	return ground, !isControl(r) && !isBidiOverride(r), false
}

func afterEscape(r rune) (parseState, bool, bool) {
	switch {
	case r == '[':
		return csi, false, false
	case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
		return ctrlString, false, false
	case r == 0x1b:
		return escape, false, false
	case r >= 0x20 && r <= 0x2f:
		return escInter, false, false
	case r >= 0x30 && r <= 0x7e:
		return ground, false, false // the final byte of a two-character escape
	case r < 0x20:
		return escape, false, false // a control inside a sequence: dropped
	}
	return ground, false, true
}

// inSequence reads r inside an escape or control sequence whose middle
// bytes are lo..hi: a final byte (hi+1..0x7e) ends it.
func inSequence(r, lo, hi rune, s parseState) (parseState, bool, bool) {
	switch {
	case r >= lo && r <= hi:
		return s, false, false
	case r > hi && r <= 0x7e:
		return ground, false, false
	case r == 0x1b:
		return escape, false, false
	case r < 0x20:
		return s, false, false
	}
	return ground, false, true
}

func inControlString(r rune) (parseState, bool, bool) {
	switch r {
	case 0x07, c1ST:
		return ground, false, false
	case 0x1b:
		return ctrlStringEsc, false, false
	case '\n':
		return ground, false, true
	}
	return ctrlString, false, false
}

// Unprintable reports whether r has no place in one line of plain text:
// a control character (newline, tab and escape included) or a bidi
// override or isolate. Sanitize removes all of them but newline and tab.
func Unprintable(r rune) bool { return isControl(r) || isBidiOverride(r) }

// isControl reports C0 and C1 controls and DEL.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }

func isBidiOverride(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
