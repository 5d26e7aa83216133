package yamlsyntax

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// mistake is a syntax error told for the author, with the lines it spans
// and the guesses at what was meant there.
type mistake struct {
	Error
	// first and last are the lines neutralised to read past it.
	first, last int
	// fixLine is the line the repairs rewrite.
	fixLine int
	fixes   func(lines [][]byte) []string
}

// classify tells the mistake yaml.v3 stopped at. The line it names is
// where the construct it was reading began, counted from 0 for a parser
// error ("did not find expected ..."), from 1 for a scanner error; what
// the message says is wrong tells which token on or after that line to
// look for.
func classify(f *failure, lines [][]byte) mistake {
	at := f.line
	if strings.HasPrefix(f.msg, "did not find expected") {
		at++
	}
	at = min(max(at, 1), len(lines))
	// A construct on line 1 has no line in the message (0 means none):
	// yaml.v3 names the problem's line instead, below it.
	starts := []int{at, 1}
	switch {
	case f.msg == "found unexpected end of stream":
		for _, l := range starts {
			if t := scanLine(bodyAt(lines, l)); t.quote != 0 {
				q := string(t.quote)
				return mistake{
					Error: Error{Line: l, Col: t.quoteCol, Msg: "the string opened with " + q + " here is never closed", Hint: "close it with `" + q + "`"},
					first: l, last: l, fixLine: l,
					fixes: appendText(l, q, false),
				}
			}
		}
	case f.msg == "could not find expected ':'":
		body := bodyAt(lines, at)
		return mistake{
			Error: Error{Line: at, Col: indentCol(body), Msg: fmt.Sprintf("`%s` has no `:` after it", bytes.TrimSpace(body)), Hint: "write `KEY: VALUE`, or remove the line"},
			first: at, last: at, fixLine: at,
			fixes: appendText(at, ":", true),
		}
	case strings.HasPrefix(f.msg, "did not find expected ',' or "):
		open := '{'
		if strings.HasSuffix(f.msg, "']'") {
			open = '['
		}
		for _, l := range starts {
			if col, ok := scanLine(bodyAt(lines, l)).innermost(open); ok {
				return unclosed(lines, l, col, open)
			}
		}
	case f.msg == "did not find expected key" || f.msg == "did not find expected '-' indicator":
		if l, b, ok := misindented(lines, at); ok {
			e := Error{Line: l, Col: indentCol(bodyAt(lines, l)), Hint: "line it up with the keys it belongs with"}
			e.Msg = fmt.Sprintf("bad indentation: this line does not line up with the keys of the mapping that starts at line %d", b.line)
			if b.list {
				e.Msg = fmt.Sprintf("bad indentation: this line is neither an item of the list that starts at line %d nor lined up with the keys of one", b.line)
			}
			return mistake{Error: e, first: l, last: l, fixLine: l, fixes: reindent(l)}
		}
	case strings.HasPrefix(f.msg, "unknown anchor '"):
		name := strings.TrimSuffix(strings.TrimPrefix(f.msg, "unknown anchor '"), "' referenced")
		if l, col, ok := findAlias(lines, name); ok {
			return mistake{Error: Error{Line: l, Col: col, Msg: f.msg, Hint: "fix the YAML syntax"}, first: l, last: l, fixLine: l, fixes: reindent(l)}
		}
	}
	if strings.Contains(f.msg, "tab character") {
		for l := at; l <= len(lines); l++ {
			if tabIndented(bodyAt(lines, l)) {
				at = l
				break
			}
		}
	}
	body := bodyAt(lines, at)
	e := Error{Line: at, Col: indentCol(body), Msg: f.msg, Hint: "fix the YAML syntax"}
	fixes := reindent(at)
	switch {
	case tabIndented(body):
		e.Col = bytes.IndexByte(body, '\t') + 1
		e.Msg, e.Hint = "a tab indents this line", "fix the YAML syntax: indent with spaces, never tabs"
	case f.msg == "mapping values are not allowed in this context":
		// The `:` it cannot take is the second on the line, or the only one.
		if c := scanLine(body).colons; len(c) > 0 {
			e.Col = c[min(1, len(c)-1)]
		}
		e.Msg = "unexpected `:` here"
		e.Hint = "line the key up with the keys above it, or quote a value that holds `: `"
		fixes = func(l [][]byte) []string { return append(reindent(at)(l), quoteValue(at)(l)...) }
	}
	return mistake{Error: e, first: at, last: at, fixLine: at, fixes: fixes}
}

// unclosed is the mistake of a `[` or `{` opened at line:col and never
// closed. The lines after it indented deeper are the rest of what it
// holds; the closer is guessed at the end of the last of them.
func unclosed(lines [][]byte, line, col int, open rune) mistake {
	closer := map[rune]string{'[': "]", '{': "}"}[open]
	last, in := line, indentCol(bodyAt(lines, line))-1
	for l := line + 1; l <= len(lines); l++ {
		ind := indents(bodyAt(lines, l))
		if ind == nil {
			continue
		}
		if ind[0] <= in {
			break
		}
		last = l
	}
	return mistake{
		Error: Error{Line: line, Col: col, Msg: "the `" + string(open) + "` opened here is never closed", Hint: "close it with `" + closer + "`"},
		first: line, last: last, fixLine: last,
		fixes: appendText(last, closer, true),
	}
}

// tabIndented reports whether a tab stands in a line's indentation.
func tabIndented(body []byte) bool {
	text := bytes.TrimLeft(body, " \t")
	return bytes.ContainsRune(body[:len(body)-len(text)], '\t')
}

// repair rewrites the mistake's line with the first guess after which the
// parser gets past it, and reports whether one did.
func (m mistake) repair(lines [][]byte) bool {
	i := m.fixLine - 1
	if i >= len(lines) {
		return false
	}
	was := lines[i]
	_, eol := cutEOL(was)
	for _, fix := range m.fixes(lines) {
		lines[i] = append([]byte(fix), eol...)
		if m.gotPast(firstError(lines), lines) {
			return true
		}
	}
	lines[i] = was
	return false
}

// gotPast reports whether a repaired reading, stopping at f (nil: not at
// all), got past m: it stops below m's lines. A stop above them is not
// past: yaml.v3 names the line a construct began on, which can be above
// the token it could not take.
func (m mistake) gotPast(f *failure, lines [][]byte) bool {
	return f == nil || classify(f, lines).first > m.last
}

// appendText guesses the line ends with text missing; beforeComment puts
// it before a trailing comment (a quote cannot hold one).
func appendText(line int, text string, beforeComment bool) func([][]byte) []string {
	return func(lines [][]byte) []string {
		body := string(bodyAt(lines, line))
		if i := strings.Index(body, " #"); beforeComment && i >= 0 {
			return []string{body[:i] + text + body[i:]}
		}
		return []string{strings.TrimRight(body, " ") + text}
	}
}

// reindent guesses the line is indented wrongly: it tries the indentation
// of each line above, nearest first, and of the entries of list items.
func reindent(line int) func([][]byte) []string {
	return func(lines [][]byte) []string {
		body := bodyAt(lines, line)
		text := string(bytes.TrimLeft(body, " \t"))
		have := len(body) - len(text)
		var out []string
		var tried []int
		for j := line - 2; j >= 0; j-- {
			for _, n := range indents(lines[j]) {
				if n != have && !slices.Contains(tried, n) {
					tried = append(tried, n)
					out = append(out, strings.Repeat(" ", n)+text)
				}
			}
		}
		return out
	}
}

// indents lists where a line's entries start: its indentation and, after
// each `- `, the column of the list item's content.
func indents(line []byte) []int {
	body, _ := cutEOL(line)
	rest := bytes.TrimLeft(body, " ")
	if len(rest) == 0 || rest[0] == '#' || rest[0] == '\t' {
		return nil
	}
	out := []int{len(body) - len(rest)}
	for bytes.HasPrefix(rest, []byte("- ")) {
		rest = bytes.TrimLeft(rest[2:], " ")
		out = append(out, len(body)-len(rest))
	}
	return out
}

// quoteValue guesses a value holds `: ` and was meant as a string.
func quoteValue(line int) func([][]byte) []string {
	return func(lines [][]byte) []string {
		body := string(bodyAt(lines, line))
		key, val, ok := strings.Cut(body, ": ")
		if !ok || strings.TrimSpace(val) == "" {
			return nil
		}
		return []string{key + ": " + strconv.Quote(strings.TrimSpace(val))}
	}
}

func bodyAt(lines [][]byte, line int) []byte {
	if line < 1 || line > len(lines) {
		return nil
	}
	body, _ := cutEOL(lines[line-1])
	return body
}
