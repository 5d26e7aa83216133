// Package placement finds where each {{name}} placeholder of a `run`
// command stands in the shell's reading of it, and refuses one that would
// not expand as one word or whose value the shell would read as code or
// as a name. It is the shell parser's half of the `run` hook's promise
// that issue values never become shell text (docs/SECURITY.md), kept
// apart from running the command so that it can grow with the shell
// constructs it knows without reaching into the hook.
package placement

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Check lists the placeholders of a command that stand where
// their references would not expand, or where the shell would read the
// value as code or as a name, one error for each. The command is parsed
// as POSIX sh, what `sh -c` runs; a command that does not parse is an
// error saying where. Where /bin/sh is bash, bash reads some POSIX text
// differently ([[, ((, let, declare, $'...'), so the command is also read
// as bash when it parses as bash. env names the environment variable a
// placeholder's value is in, for the errors.
func Check(command string, env func(name string) string) []error {
	m := mark(command)
	if len(m.spots) == 0 {
		return nil // nothing to place: its syntax is the shell's business
	}
	posix, err := parse(m.text, syntax.LangPOSIX)
	if err != nil {
		return []error{parseError(m, err)}
	}
	bash, err := parse(m.text, syntax.LangBash)
	if err != nil {
		bash = nil
	}
	c := &placer{m: m, env: env, problems: make([]error, len(m.spots)), values: valuePlaces(bash)}
	c.walk(posix, expands)
	if bash != nil {
		c.walk(bash, expands)
	}
	return slices.DeleteFunc(c.problems, func(err error) bool { return err == nil })
}

func parse(text string, lang syntax.LangVariant) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(text), "")
}

// parseError says where the command does not parse, in the command as
// written, and what the parser said.
func parseError(m *marking, err error) error {
	var pos syntax.Pos
	var parseErr syntax.ParseError
	var langErr syntax.LangError
	switch {
	case errors.As(err, &parseErr):
		pos = parseErr.Pos
	case errors.As(err, &langErr):
		pos = langErr.Pos
	default:
		return fmt.Errorf("cannot parse the command as sh: %w", err)
	}
	msg := strings.TrimPrefix(err.Error(), pos.String()+": ")
	return fmt.Errorf("cannot parse the command as sh at %s: %s", m.position(int(pos.Offset())), m.restore(msg))
}

// placer walks a parsed command, noting for each placeholder the first
// reason to refuse it.
type placer struct {
	m        *marking
	env      func(name string) string
	problems []error // by spot
	// values are the variables whose values the shell reads again, and
	// where that puts a placeholder in a value assigned to them.
	values map[string]place
}

// walk visits n and everything under it, standing in p.
func (c *placer) walk(n syntax.Node, p place) {
	syntax.Walk(n, func(x syntax.Node) bool { return x != nil && c.visit(x, p) })
}

// under visits everything under n, standing in p.
func (c *placer) under(n syntax.Node, p place) {
	syntax.Walk(n, func(x syntax.Node) bool {
		switch x {
		case nil:
			return false
		case n:
			return true
		}
		return c.visit(x, p)
	})
}

// visit notes the placeholders of n, which stands in p, and reports
// whether the walk goes on under n: only for nodes that change nothing
// about where placeholders stand. Under the others, visit walks itself.
func (c *placer) visit(n syntax.Node, p place) bool {
	switch n := n.(type) {
	case *syntax.Lit:
		c.note(n.Value, p)
	case *syntax.SglQuoted:
		c.note(n.Value, within(p, inSingleQuotes))
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
		c.under(n, within(p, inArithmetic))
	case *syntax.ParamExp:
		c.paramExp(n, p)
	case *syntax.Assign:
		c.assign(n, p, expands)
	case *syntax.Redirect:
		c.redirect(n, p)
	case *syntax.Stmt:
		return c.stmt(n, p)
	case *syntax.BinaryCmd:
		return c.binaryCmd(n, p)
	case *syntax.CallExpr:
		c.call(n, p)
	case *syntax.DeclClause:
		c.decl(n, p)
	case *syntax.BinaryTest:
		return c.binaryTest(n, p)
	case *syntax.UnaryTest:
		return c.unaryTest(n, p)
	case *syntax.FuncDecl:
		c.funcDecl(n, p)
	case *syntax.WordIter:
		c.wordIter(n, p)
	default:
		return true
	}
	return false
}

// note records the markers of a literal standing in p.
func (c *placer) note(lit string, p place) {
	for _, f := range c.m.in(lit) {
		q := p
		if q == expands && f.escapes%2 == 1 {
			q = afterBackslash
		}
		if q == expands || c.problems[f.spot] != nil {
			continue
		}
		s := c.m.spots[f.spot]
		c.problems[f.spot] = fmt.Errorf("{{%s}} at %s %s", s.name, lineCol(c.m.command, s.start), q.why(s.name, c.env(s.name)))
	}
}

func (c *placer) words(ws []*syntax.Word, p place) {
	for _, w := range ws {
		if w != nil {
			c.walk(w, p)
		}
	}
}

func (c *placer) paramExp(n *syntax.ParamExp, p place) {
	if n.Param != nil {
		c.walk(n.Param, within(p, afterDollar))
	}
	c.arithm(n.Index, p)
	if n.Slice != nil {
		c.arithm(n.Slice.Offset, p)
		c.arithm(n.Slice.Length, p)
	}
	if n.Repl != nil {
		c.words([]*syntax.Word{n.Repl.Orig, n.Repl.With}, p)
	}
	if n.Exp != nil {
		c.words([]*syntax.Word{n.Exp.Word}, p)
	}
}

// arithm sees an arithmetic expression, if there is one.
func (c *placer) arithm(x syntax.ArithmExpr, p place) {
	if x != nil {
		c.walk(x, within(p, inArithmetic))
	}
}

// assign sees an assignment whose value stands in value (within p):
// arithmetic after declare -i, say. The variable may have its own reason
// to read the value again (c.values).
func (c *placer) assign(n *syntax.Assign, p, value place) {
	if n.Name != nil {
		c.walk(n.Name, within(p, inName))
		value = within(value, c.values[n.Name.Value])
	}
	c.arithm(n.Index, p)
	c.words([]*syntax.Word{n.Value}, within(p, value))
	if n.Array != nil {
		c.walk(n.Array, within(p, value))
	}
}

func (c *placer) funcDecl(n *syntax.FuncDecl, p place) {
	if n.Name != nil {
		c.walk(n.Name, within(p, inName))
	}
	c.walk(n.Body, p)
}

// wordIter sees the name and the words of a for or select loop: the
// words are assigned to the name in turn.
func (c *placer) wordIter(n *syntax.WordIter, p place) {
	c.walk(n.Name, within(p, inName))
	c.words(n.Items, within(p, c.values[n.Name.Value]))
}

// redirect sees the target of a redirection, and the text of a
// here-document, which is expanded only when the delimiter is not quoted.
// (A placeholder in a delimiter leaves the here-document unclosed, since
// no line can match it: the parser refuses that.)
func (c *placer) redirect(n *syntax.Redirect, p place) {
	c.walk(n.Word, p)
	if n.Hdoc == nil {
		return
	}
	if quoted(n.Word) {
		c.walk(n.Hdoc, within(p, inQuotedHeredoc))
		return
	}
	c.walk(n.Hdoc, p)
}

// quoted reports whether a here-document delimiter is quoted in any way
// ('EOF', "EOF", \EOF, E"O"F): then the shell expands nothing in its text.
func quoted(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(part.Value, `\`) {
				return true
			}
		}
	}
	return false
}
