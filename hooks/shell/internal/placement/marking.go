package placement

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenttree/agenttree/stages"
)

// marking is a command with each {{name}} placeholder replaced by a marker
// word, so that a shell parser can say where the placeholders stand. A
// marker is a plain name (letters, digits, underscores): it is one word
// wherever the placeholder's reference would be one, and a name where the
// shell wants one (after `$`, in arithmetic), so the parser reads it there
// rather than failing on it.
type marking struct {
	command string
	// text is the command with markers for its placeholders.
	text string
	// base begins every marker and occurs nowhere in the command, so a
	// marker found in the parsed text is always one of ours.
	base  string
	spots []spot
}

// spot is one placeholder of the command.
type spot struct {
	name string
	// start, end are its bytes in the command; at, until its marker's
	// bytes in the marked text.
	start, end, at, until int
}

// markerBase has no proper suffix that is also a prefix of it, so text
// before a marker cannot combine with the marker into a false one.
const markerBase = "AgentTreePlaceholder"

// mark replaces each placeholder of command by a marker of its own.
func mark(command string) *marking {
	m := &marking{command: command, base: markerBase}
	for strings.Contains(command, m.base) {
		m.base += "X"
	}
	grown := 0 // how much longer the marked text is so far
	m.text = stages.Expand(command, func(name string, start, end int) string {
		marker := m.base + strconv.Itoa(len(m.spots)) + "_"
		at := start + grown
		grown += len(marker) - (end - start)
		m.spots = append(m.spots, spot{name: name, start: start, end: end, at: at, until: at + len(marker)})
		return marker
	})
	return m
}

// found is a marker found in a parsed literal: the placeholder it stands
// for, and how many backslashes come right before it.
type found struct {
	spot    int
	escapes int
}

// in finds the markers in s, a literal the parser read from the marked
// text.
func (m *marking) in(s string) []found {
	var out []found
	for i := 0; ; {
		j := strings.Index(s[i:], m.base)
		if j < 0 {
			return out
		}
		at := i + j
		digits := at + len(m.base)
		k := digits
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		n, err := strconv.Atoi(s[digits:k])
		if err == nil && n < len(m.spots) {
			out = append(out, found{spot: n, escapes: at - len(strings.TrimRight(s[:at], `\`))})
		}
		i = k
	}
}

// position is where offset, a byte of the marked text, stands in the
// command as written, as line:col (columns count characters).
func (m *marking) position(offset int) string {
	orig := offset
	for _, s := range m.spots {
		if offset < s.at {
			break
		}
		if offset < s.until {
			orig = s.start
			break
		}
		orig = offset - s.until + s.end
	}
	return lineCol(m.command, orig)
}

// lineCol is the line:col of byte offset in text, both from 1.
func lineCol(text string, offset int) string {
	offset = min(offset, len(text))
	before := text[:offset]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndex(before, "\n")+1:]) + 1
	return strconv.Itoa(line) + ":" + strconv.Itoa(col)
}

// restore writes the placeholders back over their markers in a parser's
// message.
func (m *marking) restore(msg string) string {
	if !strings.Contains(msg, m.base) {
		return msg
	}
	pairs := make([]string, 0, 2*len(m.spots))
	for _, s := range m.spots {
		pairs = append(pairs, m.text[s.at:s.until], m.command[s.start:s.end])
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}
