package yamlsyntax

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
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
	// unclosed says the mistake is a `[` or `{` never closed.
	unclosed bool
}

// classify tells the mistake at le. The parser stops at the token where it
// can no longer go on, which for an unclosed quote or bracket, or a key
// without its colon, is past the token that is wrong: its context mark
// names that one.
func classify(le *yaml.LoadError, lines [][]byte) mistake {
	mark := clamp(le.Mark, lines)
	ctx := clamp(le.ContextMark, lines)
	switch {
	case strings.HasPrefix(le.ContextMsg, "while scanning a quoted scalar"):
		q := charAt(lines, ctx)
		return mistake{
			Error: Error{Line: ctx.Line, Col: ctx.Column, Msg: "the string opened with " + q + " here is never closed", Hint: "close it with `" + q + "`"},
			first: ctx.Line, last: ctx.Line, fixLine: ctx.Line,
			fixes: appendText(ctx.Line, q, false),
		}
	case strings.HasPrefix(le.ContextMsg, "while parsing a flow ") && (le.Mark.Line > ctx.Line || atEnd(le.Mark, lines)):
		return unclosed(lines, ctx, max(ctx.Line, mark.Line-1))
	case strings.HasPrefix(le.ContextMsg, "while scanning a simple key"):
		key := strings.TrimSpace(string(bodyAt(lines, ctx.Line)))
		return mistake{
			Error: Error{Line: ctx.Line, Col: ctx.Column, Msg: fmt.Sprintf("`%s` has no `:` after it", key), Hint: "write `KEY: VALUE`, or remove the line"},
			first: ctx.Line, last: ctx.Line, fixLine: ctx.Line,
			fixes: appendText(ctx.Line, ":", true),
		}
	}
	if m, ok := insideUnclosed(le, lines); ok {
		return m
	}
	e := Error{Line: mark.Line, Col: mark.Column, Msg: le.Message, Hint: "fix the YAML syntax"}
	fixes := reindent(mark.Line)
	switch {
	case strings.Contains(le.Message, "tab character") || tabIndented(bodyAt(lines, mark.Line)):
		e.Msg, e.Hint = "a tab indents this line", "fix the YAML syntax: indent with spaces, never tabs"
	case strings.HasPrefix(le.ContextMsg, "while parsing a block "):
		e.Msg = fmt.Sprintf("bad indentation: this line does not line up with the keys of the mapping that starts at line %d", ctx.Line)
		if strings.Contains(le.ContextMsg, "collection") {
			e.Msg = fmt.Sprintf("bad indentation: this line is neither an item of the list that starts at line %d nor lined up with the keys of one", ctx.Line)
		}
		e.Hint = "line it up with the keys it belongs with"
	case strings.Contains(le.Message, "mapping values are not allowed"):
		e.Msg = "unexpected `:` here"
		e.Hint = "line the key up with the keys above it, or quote a value that holds `: `"
		fixes = either(reindent(mark.Line), quoteValue(mark.Line))
	}
	return mistake{Error: e, first: mark.Line, last: mark.Line, fixLine: mark.Line, fixes: fixes}
}

// unclosed is the mistake of a `[` or `{` opened at ctx and never closed
// up to line last. The closer is guessed at the end of the last line with
// content: comment lines after it belong to what follows.
func unclosed(lines [][]byte, ctx yaml.Mark, last int) mistake {
	open := charAt(lines, ctx)
	closer := map[string]string{"[": "]", "{": "}"}[open]
	fix := last
	for fix > ctx.Line && isComment(bodyAt(lines, fix)) {
		fix--
	}
	return mistake{
		Error: Error{Line: ctx.Line, Col: ctx.Column, Msg: "the `" + open + "` opened here is never closed", Hint: "close it with `" + closer + "`"},
		first: ctx.Line, last: last, fixLine: fix,
		fixes:    appendText(fix, closer, true),
		unclosed: true,
	}
}

// insideUnclosed finds the mistake behind an error the scanner raises with
// no context of its own (a `:` it cannot take, say) when the real mistake
// is a bracket left open above it: the lines before the error, parsed on
// their own, then end inside that bracket.
func insideUnclosed(le *yaml.LoadError, lines [][]byte) (mistake, bool) {
	mark := clamp(le.Mark, lines)
	if le.ContextMsg != "" || mark.Line < 2 {
		return mistake{}, false
	}
	before := lines[:mark.Line-1]
	pe := firstError(before)
	if pe == nil || !strings.HasPrefix(pe.ContextMsg, "while parsing a flow ") {
		return mistake{}, false
	}
	ctx := clamp(pe.ContextMark, before)
	return unclosed(lines, ctx, mark.Line-1), true
}

// tabIndented reports whether a tab stands in a line's indentation.
func tabIndented(body []byte) bool {
	text := bytes.TrimLeft(body, " \t")
	return bytes.ContainsRune(body[:len(body)-len(text)], '\t')
}

func isComment(body []byte) bool {
	text := bytes.TrimLeft(body, " \t")
	return len(text) == 0 || text[0] == '#'
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

// gotPast reports whether a repaired reading, stopping at le (nil: not at
// all), got past m: it stops at none of m's lines.
func (m mistake) gotPast(le *yaml.LoadError, lines [][]byte) bool {
	if le == nil {
		return true
	}
	next := classify(le, lines)
	return next.Error != m.Error && (next.first < m.first || next.first > m.last)
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

func either(fs ...func([][]byte) []string) func([][]byte) []string {
	return func(lines [][]byte) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f(lines)...)
		}
		return out
	}
}

// clamp keeps a mark on a line of the file: the end of the stream is
// reported on the last line.
func clamp(m yaml.Mark, lines [][]byte) yaml.Mark {
	if m.Line > len(lines) {
		m.Line = len(lines)
		m.Column = len([]rune(string(bodyAt(lines, m.Line)))) + 1
	}
	m.Line, m.Column = max(m.Line, 1), max(m.Column, 1)
	return m
}

// atEnd reports whether m is past the last character of the file.
func atEnd(m yaml.Mark, lines [][]byte) bool {
	return m.Index >= len(bytes.TrimRight(bytes.Join(lines, nil), " \t\r\n")) || m.Line > len(lines)
}

func bodyAt(lines [][]byte, line int) []byte {
	if line < 1 || line > len(lines) {
		return nil
	}
	body, _ := cutEOL(lines[line-1])
	return body
}

// charAt is the character at m; columns count characters, not bytes.
func charAt(lines [][]byte, m yaml.Mark) string {
	r := []rune(string(bodyAt(lines, m.Line)))
	if m.Column < 1 || m.Column > len(r) {
		return ""
	}
	return string(r[m.Column-1])
}
