package shell

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// place is where a placeholder stands, as far as its expansion goes.
type place int

const (
	// expands: bare, in double quotes, in $(...) or `...`, in ${...},
	// in an unquoted here-document.
	expands place = iota
	afterBackslash
	inSingleQuotes   // '...', and $'...'
	inQuotedHeredoc  // the text of <<'EOF', <<"EOF", <<\EOF
	afterDollar      // ${{x}}: the shell reads a name
	inName           // a variable, function or loop name: {{x}}=1, for {{x}} in
	inArithmetic     // $(( )), (( )), $[ ], let, an array subscript, ${v:offset}
	inTest           // [[ ]]
	inReparsedScript // eval, trap, the script of sh -c
)

// why says what is wrong with a placeholder in place p and what to write
// instead; env is the variable the placeholder stands for.
func (p place) why(name, env string) string {
	switch p {
	case afterBackslash:
		return "follows a backslash, which would escape it; remove the backslash"
	case inSingleQuotes:
		return fmt.Sprintf("stands inside single quotes, and inside single quotes the shell expands nothing (it would print a reference to $%s); "+
			"close the quotes around the placeholder ('a '{{%s}}' b') or use double quotes (\"a {{%s}} b\")", env, name, name)
	case inQuotedHeredoc:
		return "stands in a here-document whose delimiter is quoted (<<'EOF'), where the shell expands nothing; " +
			"unquote the delimiter (<<EOF) and escape the text's own $, ` and \\ with a backslash"
	case afterDollar:
		return "follows a `$`, which makes the shell read a variable name there; write \\$ for a dollar sign before the value"
	case inName:
		return fmt.Sprintf("stands in a variable, function or loop name, which the shell never takes from a value; give it as a value instead (NAME={{%s}})", name)
	case inArithmetic:
		return fmt.Sprintf("stands in arithmetic ($(( )), (( )), let, an array subscript), where the shell evaluates the value as an expression, "+
			"and bash runs the commands in one like a[$(id)]; check that it is a number first: "+
			"n={{%s}}; case $n in ''|*[!0-9]*) exit 1;; esac; echo $((n + 1))", name)
	case inTest:
		return "stands in [[ ]], where bash evaluates the operands of -eq, -lt, ... as arithmetic " +
			"and runs the commands in a value like a[$(id)]; use [ ] (test) instead"
	case inReparsedScript:
		return fmt.Sprintf("is part of a script that eval, trap or sh -c parses again, so the value would run as code; "+
			"give the script the value as a variable or an argument instead: v={{%s}}; eval 'echo \"$v\"', or sh -c 'echo \"$1\"' sh {{%s}}", name, name)
	}
	return ""
}

// within is where a placeholder stands inside a construct that would put
// it in q, when the construct itself stands in p: the outermost reason to
// refuse it wins.
func within(p, q place) place {
	if p != expands {
		return p
	}
	return q
}

// checkPlacement lists the placeholders of a command that stand where
// their references would not expand, or where the shell would read the
// value as code, one error for each. The command is parsed as POSIX sh, what `sh -c` runs; a
// command that does not parse is an error saying where. Where /bin/sh
// is bash, bash reads some POSIX text differently ([[, ((, let, $'...'),
// so the command is also read as bash when it parses as bash.
func checkPlacement(command string) []error {
	m := mark(command)
	if len(m.spots) == 0 {
		return nil // nothing to place: its syntax is the shell's business
	}
	posix, err := parse(m.text, syntax.LangPOSIX)
	if err != nil {
		return []error{parseError(m, err)}
	}
	c := &placer{m: m, problems: make([]error, len(m.spots))}
	c.walk(posix, expands)
	if bash, err := parse(m.text, syntax.LangBash); err == nil {
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
	problems []error // by spot
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
	case *syntax.TestClause:
		c.under(n, within(p, inTest))
	case *syntax.ParamExp:
		c.paramExp(n, p)
	case *syntax.Assign:
		c.assign(n, p)
	case *syntax.Redirect:
		c.redirect(n, p)
	case *syntax.CallExpr:
		c.call(n, p)
	case *syntax.FuncDecl:
		if n.Name != nil {
			c.walk(n.Name, within(p, inName))
		}
		c.walk(n.Body, p)
	case *syntax.WordIter:
		c.walk(n.Name, within(p, inName))
		c.words(n.Items, p)
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
		c.problems[f.spot] = fmt.Errorf("{{%s}} at %s %s", s.name, lineCol(c.m.command, s.start), q.why(s.name, envName(s.name)))
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

func (c *placer) assign(n *syntax.Assign, p place) {
	if n.Name != nil {
		c.walk(n.Name, within(p, inName))
	}
	c.arithm(n.Index, p)
	c.words([]*syntax.Word{n.Value}, p)
	if n.Array != nil {
		c.walk(n.Array, p)
	}
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

// call sees a simple command, some of whose arguments may be code again.
func (c *placer) call(n *syntax.CallExpr, p place) {
	for _, a := range n.Assigns {
		c.walk(a, p)
	}
	from, to := scriptArgs(n.Args)
	for i, w := range n.Args {
		q := p
		if from <= i && i < to {
			q = within(p, inReparsedScript)
		}
		c.walk(w, q)
	}
}

// reparsers are the commands that parse their arguments as shell code.
var reparsers = map[string]bool{"eval": true, "trap": true}

// shells are the commands whose -c option takes a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// scriptArgs are the arguments args[from:to] that are parsed as shell
// code again: every argument of eval and trap; the script of
// `sh -c SCRIPT`, wherever the shell stands among the arguments
// (`timeout 60 sh -c ...`).
func scriptArgs(args []*syntax.Word) (from, to int) {
	if len(args) > 0 && reparsers[args[0].Lit()] {
		return 1, len(args)
	}
	for i, w := range args {
		if !shells[path.Base(w.Lit())] {
			continue
		}
		if s := shellScript(args[i+1:]); s >= 0 {
			return i + 1 + s, i + 2 + s
		}
	}
	return 0, 0
}

// shellScript is the index of the script among a shell's arguments: the
// first word that is no option, once an option word held a c; -1 if the
// shell was not given -c. `-o NAME` takes the next word.
func shellScript(args []*syntax.Word) int {
	c := false
	for i := 0; i < len(args); i++ {
		a := args[i].Lit()
		switch {
		case a == "--" && c && i+1 < len(args):
			return i + 1
		case strings.HasPrefix(a, "--"): // the end of options, or a long option
			if a == "--" {
				return -1
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			c = c || strings.ContainsRune(a, 'c')
			if strings.HasSuffix(a, "o") {
				i++
			}
		case c:
			return i
		default:
			return -1
		}
	}
	return -1
}
