package yamlsyntax

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf8"
)

// tokens is what a scan of one line finds outside quotes and comments.
// Columns count characters from 1, as an editor shows them.
type tokens struct {
	// quote is a quote left open at the end of the line (0: none), at
	// quoteCol.
	quote    rune
	quoteCol int
	// open are the `[` and `{` left open at the end of the line, outermost
	// first.
	open []opener
	// colons are the `:` that end a key, outside brackets.
	colons []int
}

type opener struct {
	char rune
	col  int
}

// scanLine scans one line. A quote or bracket counts only where a token
// starts (after the indentation, `- `, `: `, `,`, `[` or `{`): elsewhere
// it is part of a plain scalar, as the `'` in `it's`.
func scanLine(body []byte) tokens {
	var t tokens
	r := []rune(string(body))
	last := ' ' // the last character that is not a space; a space at the start
	for i := 0; i < len(r); i++ {
		c := r[i]
		start := (i == 0 || strings.ContainsRune(" \t[{,", r[i-1])) && strings.ContainsRune(" -:?[{,", last)
		switch {
		case c == '#' && (i == 0 || r[i-1] == ' ' || r[i-1] == '\t'):
			return t
		case (c == '"' || c == '\'') && start:
			j := closingQuote(r, i)
			if j < 0 {
				t.quote, t.quoteCol = c, i+1
				return t
			}
			i = j
		case (c == '[' || c == '{') && start:
			t.open = append(t.open, opener{c, i + 1})
		case (c == ']' || c == '}') && len(t.open) > 0:
			t.open = t.open[:len(t.open)-1]
		case c == ':' && len(t.open) == 0 && (i+1 == len(r) || r[i+1] == ' ' || r[i+1] == '\t'):
			t.colons = append(t.colons, i+1)
		}
		if c != ' ' && c != '\t' {
			last = c
		}
	}
	return t
}

// closingQuote is the index of the quote closing the one at r[i], -1 when
// the line does not close it. Single quotes escape by doubling,
// double quotes with a backslash.
func closingQuote(r []rune, i int) int {
	q := r[i]
	for j := i + 1; j < len(r); j++ {
		switch {
		case q == '"' && r[j] == '\\':
			j++
		case r[j] == q && q == '\'' && j+1 < len(r) && r[j+1] == '\'':
			j++
		case r[j] == q:
			return j
		}
	}
	return -1
}

// innermost is the column of the innermost `char` left open.
func (t tokens) innermost(char rune) (col int, ok bool) {
	for i := len(t.open) - 1; i >= 0; i-- {
		if t.open[i].char == char {
			return t.open[i].col, true
		}
	}
	return 0, false
}

// block is a block mapping or list, by the indentation of its entries.
type block struct {
	indent, line int
	list         bool
}

// below is what a line leaves to the deeper lines under it.
type below int

const (
	// rest is the rest of a scalar: a key or an item there is wrong.
	rest below = iota
	// entries are a block's: after `key:` or a bare `-`.
	entries
	// text is a block scalar's (after `|` or `>`): anything goes.
	text
)

// misindented finds the first line, from line from on, whose indentation
// does not fit the blocks above it: it closes them without lining up with
// one still open, or goes deeper under a scalar with a key or an item, or
// is at a list's indentation without its `- `. b is the block it falls in.
func misindented(lines [][]byte, from int) (line int, b block, ok bool) {
	var open []block
	under, prev := entries, 0 // what the line above leaves, and its indentation
	for i := range lines {
		ind := indents(lines[i])
		if ind == nil {
			continue
		}
		n, dash := i+1, len(ind) > 1
		fits := true
		if len(open) == 0 || ind[0] > open[len(open)-1].indent {
			switch under {
			case entries:
				open = append(open, block{ind[0], n, dash})
			case rest:
				body, _ := cutEOL(lines[i])
				fits = !dash && len(scanLine(body).colons) == 0
				fallthrough
			case text:
				if fits || n < from {
					continue
				}
			}
		} else {
			for len(open) > 1 && open[len(open)-1].indent > ind[0] {
				open = open[:len(open)-1]
			}
			top := open[len(open)-1]
			switch {
			case top.indent != ind[0]:
				fits = false
			case top.list && !dash:
				// The end of a list at its key's indentation.
				if fits = len(open) > 1 && open[len(open)-2].indent == ind[0]; fits {
					open = open[:len(open)-1]
				}
			case !top.list && dash:
				// A list at its key's indentation starts right below it.
				if fits = under == entries && prev == ind[0]; fits {
					open = append(open, block{ind[0], n, true})
				}
			}
		}
		if !fits && n >= from {
			return n, open[len(open)-1], true
		}
		if !fits && open[len(open)-1].indent != ind[0] {
			open = append(open, block{ind[0], n, dash})
		}
		for j, in := range ind[1:] {
			open = append(open, block{in, n, j+2 < len(ind)})
		}
		under, prev = leaves(lines[i]), ind[0]
	}
	return 0, block{}, false
}

// leaves tells what a line leaves to the deeper lines under it.
func leaves(line []byte) below {
	body, _ := cutEOL(line)
	if i := bytes.Index(body, []byte(" #")); i >= 0 {
		body = body[:i]
	}
	body = bytes.TrimRight(body, " \t")
	switch {
	case bytes.HasSuffix(body, []byte(":")) || bytes.Equal(bytes.TrimLeft(body, " "), []byte("-")):
		return entries
	case blockScalar.Match(body):
		return text
	}
	return rest
}

// blockScalar matches a line whose value is a block scalar's header.
var blockScalar = regexp.MustCompile(`(^|[:-]\s+)[|>][-+0-9]*$`)

// findAlias finds the first use of the alias *name.
func findAlias(lines [][]byte, name string) (line, col int, ok bool) {
	for i, l := range lines {
		if j := bytes.Index(l, []byte("*"+name)); j >= 0 {
			return i + 1, utf8.RuneCount(l[:j]) + 1, true
		}
	}
	return 0, 0, false
}

// indentCol is the column of a line's first character after its
// indentation.
func indentCol(body []byte) int {
	return len(body) - len(bytes.TrimLeft(body, " \t")) + 1
}
