package placement

import (
	"maps"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// specialValues are the shell's own variables whose values it reads
// again: as a script (BASH_ENV and ENV when a shell starts, the prompts
// and PROMPT_COMMAND), or, in bash, as arithmetic.
var specialValues = map[string]place{
	"BASH_ENV": inReparsedScript, "ENV": inReparsedScript, "PROMPT_COMMAND": inReparsedScript,
	"PS0": inReparsedScript, "PS1": inReparsedScript, "PS2": inReparsedScript, "PS4": inReparsedScript,
	"RANDOM": inArithmetic, "SRANDOM": inArithmetic, "OPTIND": inArithmetic, "HISTCMD": inArithmetic,
}

// valuePlaces are the variables whose values the shell reads again, and
// where that puts a value assigned to them: the shell's own
// (specialValues), and those the command declares integers (declare -i)
// or references to a variable named by their value (declare -n), wherever
// it declares them. f is the command read as bash, nil if it is not bash.
func valuePlaces(f *syntax.File) map[string]place {
	places := maps.Clone(specialValues)
	if f == nil {
		return places
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		d, ok := n.(*syntax.DeclClause)
		if !ok {
			return true
		}
		if q := declValues(d); q != expands {
			for _, a := range d.Args {
				if a.Name != nil {
					places[a.Name.Value] = q
				}
			}
		}
		return true
	})
	return places
}

// declValues is where the options of a declaration put its values: bash
// evaluates them as arithmetic after -i, and takes them as the name of
// the variable to refer to after -n (a nameref, but for export).
func declValues(d *syntax.DeclClause) place {
	if d.Variant.Value == "nameref" {
		return inName
	}
	var flags strings.Builder
	for _, a := range d.Args {
		if a.Name == nil && strings.HasPrefix(a.Value.Lit(), "-") {
			flags.WriteString(a.Value.Lit())
		}
	}
	switch {
	case strings.ContainsRune(flags.String(), 'i'):
		return inArithmetic
	case strings.ContainsRune(flags.String(), 'n') && d.Variant.Value != "export": // export -n unexports
		return inName
	}
	return expands
}

// decl sees a declaration (declare, local, export, readonly, typeset),
// read as bash: its options say where its values stand.
func (c *placer) decl(d *syntax.DeclClause, p place) {
	values := declValues(d)
	for _, a := range d.Args {
		if a.Name == nil {
			// An option, or a word the parser could not split into
			// NAME=value ("$n=1"): bash splits it as it runs.
			c.walk(a.Value, within(p, inDeclWord))
			continue
		}
		c.assign(a, p, values)
	}
}

// arithmeticTests are the operators of [[ ]] whose operands bash
// evaluates as arithmetic. (Everything else in [[ ]] is a word.)
var arithmeticTests = map[syntax.BinTestOperator]bool{
	syntax.TsEql: true, syntax.TsNeq: true, syntax.TsLss: true, syntax.TsLeq: true, syntax.TsGtr: true, syntax.TsGeq: true,
}

func (c *placer) binaryTest(n *syntax.BinaryTest, p place) bool {
	if !arithmeticTests[n.Op] {
		return true
	}
	c.walk(n.X, within(p, inTest))
	c.walk(n.Y, within(p, inTest))
	return false
}

// unaryTest sees [[ -v NAME ]] and [[ -R NAME ]], which take a variable
// name.
func (c *placer) unaryTest(n *syntax.UnaryTest, p place) bool {
	if n.Op != syntax.TsVarSet && n.Op != syntax.TsRefVar {
		return true
	}
	c.walk(n.X, within(p, inName))
	return false
}
