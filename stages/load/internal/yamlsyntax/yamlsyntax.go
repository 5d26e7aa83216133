// Package yamlsyntax finds where a YAML document's syntax is wrong, at the
// token that is wrong, and reads past each mistake so that what else is
// wrong with the file can be told in the same run.
//
// yaml.v3's error is a message and a line, and the line is where the
// construct it was reading began (the quote, the key, the bracket, the
// block), not the token it stopped at. What the message says is wrong
// tells which token to look for; a scan of the text from that line finds
// it (scan.go).
//
// Reading past a mistake is done twice, in two readings of the file that
// bracket what the author meant: one with the mistake's lines neutralised
// (turned into comments, so every other line keeps its line and column),
// and one with the mistake repaired by the likeliest guess (the quote
// closed, the line re-indented, ...). Whatever the rest of the file gets
// wrong in both readings does not depend on how the broken lines were
// meant; a problem only one reading has was made by the reading.
package yamlsyntax

import (
	"bytes"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// Error is one syntax mistake, at the token that is wrong.
type Error struct {
	Line, Col int
	Msg, Hint string
}

// Recovery is what Recover made of a file that does not parse.
type Recovery struct {
	// Errors are the mistakes found, in file order.
	Errors []Error
	// Neutralised and Repaired are the two readings past every mistake in
	// Errors, each a whole document with the file's line count.
	Neutralised, Repaired []byte
	// Complete says both readings parse and every mistake after the first
	// was met in both: only then does the rest of the file say anything.
	Complete bool
}

// Recover finds up to max syntax mistakes in data. It returns no Errors
// when data parses.
func Recover(data []byte, max int) Recovery {
	neutral, repaired := splitLines(data), splitLines(data)
	var rec Recovery
	for len(rec.Errors) < max {
		f := firstError(neutral)
		if f == nil {
			rec.Complete = firstError(repaired) == nil
			break
		}
		// A later mistake counts only when the repaired reading meets it
		// too; one only the neutralised reading has was made by blanking.
		m := classify(f, neutral)
		if len(rec.Errors) > 0 && !metInBoth(m, repaired) {
			break
		}
		rec.Errors = append(rec.Errors, m.Error)
		if !neutralise(neutral, m.first, m.last) || !m.repair(repaired) {
			break
		}
	}
	rec.Neutralised, rec.Repaired = bytes.Join(neutral, nil), bytes.Join(repaired, nil)
	return rec
}

// failure is where yaml.v3 stopped: its message and the line it names (0
// when it names none).
type failure struct {
	line int
	msg  string
}

// firstError parses lines and returns the error it stops at, nil when it
// parses.
func firstError(lines [][]byte) *failure {
	var doc yaml.Node
	err := yaml.Unmarshal(bytes.Join(lines, nil), &doc)
	if err == nil {
		return nil
	}
	line, msg := yamlnode.SyntaxLine(err)
	return &failure{line: line, msg: msg}
}

// metInBoth reports whether the repaired reading stops at the mistake m
// the neutralised reading stopped at, as the author would be told it.
func metInBoth(m mistake, repaired [][]byte) bool {
	f := firstError(repaired)
	return f != nil && classify(f, repaired).Error == m.Error
}

// splitLines splits data after each line break; the pieces join back to
// data. The breaks are those yaml.v3 counts lines by (CR LF, LF, a lone
// CR, NEL, LS and PS), so that line n here is the line its errors name:
// a file saved with CR line ends is told where its mistakes are.
func splitLines(data []byte) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		n := len(data)
		for i := 0; i < len(data); i++ {
			if size := breakAt(data, i); size > 0 {
				n = i + size
				break
			}
		}
		lines, data = append(lines, slices.Clone(data[:n])), data[n:]
	}
	return lines
}

// breakAt is the length of the line break at data[i], 0 when there is
// none.
func breakAt(data []byte, i int) int {
	switch {
	case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
		return 2
	case data[i] == '\r' || data[i] == '\n':
		return 1
	case bytes.HasPrefix(data[i:], []byte("\u0085")):
		return 2
	case bytes.HasPrefix(data[i:], []byte("\u2028")), bytes.HasPrefix(data[i:], []byte("\u2029")):
		return 3
	}
	return 0
}

// neutralise turns lines first..last (1-based) into comments of the same
// length, so the lines after keep their positions. It reports false when
// there was nothing left to neutralise: the mistake would be met again.
func neutralise(lines [][]byte, first, last int) bool {
	changed := false
	for i := first - 1; i < last && i < len(lines); i++ {
		body, end := cutEOL(lines[i])
		if len(bytes.TrimSpace(body)) == 0 || body[0] == '#' && isBlank(body[1:]) {
			continue
		}
		c := bytes.Repeat([]byte(" "), len(body))
		c[0] = '#'
		lines[i] = append(c, end...)
		changed = true
	}
	return changed
}

func isBlank(b []byte) bool { return len(bytes.TrimLeft(b, " ")) == 0 }

// cutEOL splits a line from its line ending (splitLines).
func cutEOL(line []byte) (body, end []byte) {
	for i := range line {
		if size := breakAt(line, i); size > 0 {
			return line[:i], line[i:]
		}
	}
	return line, nil
}
