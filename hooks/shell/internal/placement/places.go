package placement

import "fmt"

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
	inName           // a variable, function or loop name: {{x}}=1, for {{x}} in, read {{x}}, declare -n r={{x}}
	inArithmetic     // $(( )), (( )), $[ ], let, an array subscript, ${v:offset}, declare -i, RANDOM=
	inTest           // an operand of [[ x -eq y ]]
	inReparsedScript // eval, trap, alias, the script of sh -c or of a shell reading stdin, BASH_ENV=, PS4=
	inDeclWord       // declare "x=..." (a word bash splits when it runs)
	inPrintfFormat   // the start of printf's format, where a value could be the option -v NAME
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
		return fmt.Sprintf("stands in a variable, function or loop name (NAME=, for NAME, read NAME, unset NAME, printf -v NAME, -v NAME, "+
			"declare -n REF=NAME), and bash runs the commands in the subscript of a name like a[$(id)]; give it as a value instead (NAME={{%s}})", name)
	case inArithmetic:
		return fmt.Sprintf("stands in arithmetic ($(( )), (( )), let, an array subscript, the value of declare -i or of RANDOM, OPTIND, ...), "+
			"where the shell evaluates the value as an expression, and bash runs the commands in one like a[$(id)]; check that it is a number first: "+
			"n={{%s}}; case $n in ''|*[!0-9]*) exit 1;; esac; echo $((n + 1))", name)
	case inTest:
		return fmt.Sprintf("stands in [[ ]] as an operand of -eq, -ne, -lt, -le, -gt or -ge, which bash evaluates as arithmetic, "+
			"running the commands in a value like a[$(id)]; compare with [ ] (test), which takes only integers: [ {{%s}} -eq 1 ]", name)
	case inReparsedScript:
		return fmt.Sprintf("is part of a script that the shell parses again (eval, trap, alias, sh -c, a shell reading a here-document or a pipe, "+
			"BASH_ENV, ENV, PS4, ...), so the value would run as code; give the script the value as a variable or an argument instead: "+
			"v={{%s}}; eval 'echo \"$v\"', or sh -c 'echo \"$1\"' sh {{%s}}", name, name)
	case inDeclWord:
		return fmt.Sprintf("stands in a word that declare, local, export or readonly splits into a name and a value only when it runs, "+
			"so the value could be a name (a[$(id)]) or, after -a, an array parsed again; write the name and = bare: declare NAME={{%s}}", name)
	case inPrintfFormat:
		return fmt.Sprintf("stands at the start of printf's format, where bash takes a value beginning with -v as that option "+
			"and runs the commands in its name like a[$(id)]; give the value as an argument: printf '%%s\\n' {{%s}}", name)
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
