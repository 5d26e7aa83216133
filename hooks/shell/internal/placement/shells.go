package placement

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shells are the commands that run a script: given with -c, from a file,
// or read from their standard input.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// shellOptionsWithArg are the shell options that take the next word as
// their argument. In a group of short options (-eo errexit), each o or O
// takes a word of its own.
var shellOptionsWithArg = map[string]bool{"-o": true, "-O": true, "+o": true, "+O": true, "--rcfile": true, "--init-file": true}

// stdinFiles name a shell's standard input as a script file.
var stdinFiles = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true}

// shellArgs is what a shell's arguments say about where its script
// comes from.
type shellArgs struct {
	c, s bool // -c: the script is an argument; -s: it is standard input
	// unknown: a word that is not plain text ($x, "$x", $(...)) stood
	// where an option or the first operand is read. Its value is known
	// only when it runs: -c, -s, a script file or nothing at all (an
	// unset $x vanishes), so the shell may read its script from its
	// standard input or from the word after it (operand).
	unknown bool
	// operand is the index of the first operand: the script with -c,
	// else the script file; -1 if there is none.
	operand int
}

// readShellArgs reads the options of a shell, which end at the first
// operand, at `--` or at `-`.
func readShellArgs(args []*syntax.Word) shellArgs {
	sa := shellArgs{operand: -1}
	for i := 0; i < len(args); i++ {
		flag, known := wordText(args[i])
		switch {
		// A placeholder is a value known only when it runs, as `$x` is:
		// `-c` for all this check knows.
		case !known || strings.Contains(flag, markerBase):
			sa.unknown, sa.operand = true, i
			return sa
		case flag == "--" || flag == "-":
			if i+1 < len(args) {
				sa.operand = i + 1
			}
			return sa
		case strings.HasPrefix(flag, "--"):
			if shellOptionsWithArg[flag] {
				i++
			}
		case len(flag) > 1 && (flag[0] == '-' || flag[0] == '+'):
			// +c and +s are -c and -s to dash, bash and zsh: c and s are
			// not options that + turns off.
			sa.c = sa.c || strings.ContainsRune(flag, 'c')
			sa.s = sa.s || strings.ContainsRune(flag, 's')
			for _, letter := range flag[1:] {
				if shellOptionsWithArg[flag[:1]+string(letter)] {
					i++
				}
			}
		default:
			sa.operand = i
			return sa
		}
	}
	return sa
}

// shellScripts are the indices in args of the words that a shell among
// them may be given as its script with -c, wherever the shell stands
// (timeout 60 sh -c ..., sudo sh -c ...): the operand after -c, and
// after a word whose value is not known, that word (when -c came before
// it) and the one after it (the word may be -c, or vanish).
func shellScripts(args []*syntax.Word) []int {
	var out []int
	for i, w := range args {
		if !shells[cmdName(w)] {
			continue
		}
		sa := readShellArgs(args[i+1:])
		at := i + 1 + sa.operand
		switch {
		case sa.unknown:
			if sa.c {
				out = append(out, at)
			}
			if at+1 < len(args) {
				out = append(out, at+1)
			}
		case sa.c && sa.operand >= 0:
			out = append(out, at)
		}
	}
	return out
}

// wordText is the text of a word written without expansions (plain,
// quoted or both), and false for one whose value is known only when it
// runs.
func wordText(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			b.WriteString(part.Value)
		case *syntax.SglQuoted:
			if part.Dollar {
				return "", false
			}
			b.WriteString(part.Value)
		case *syntax.DblQuoted:
			for _, inner := range part.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// readsScript reports whether a command reads the script it runs from its
// standard input: a shell given no -c and no script file (or -s, or
// /dev/stdin), `. /dev/stdin`, or a block or subshell running one.
func readsScript(cmd syntax.Command) bool {
	stmtReads := func(s *syntax.Stmt) bool { return readsScript(s.Cmd) }
	switch cmd := cmd.(type) {
	case *syntax.CallExpr:
		return callReadsScript(cmd.Args)
	case *syntax.Block:
		return slices.ContainsFunc(cmd.Stmts, stmtReads)
	case *syntax.Subshell:
		return slices.ContainsFunc(cmd.Stmts, stmtReads)
	case *syntax.TimeClause:
		return cmd.Stmt != nil && stmtReads(cmd.Stmt)
	}
	return false
}

func callReadsScript(args []*syntax.Word) bool {
	i := commandWord(args)
	if i == len(args) {
		return false
	}
	name, rest := cmdName(args[i]), args[i+1:]
	switch {
	case name == "." || name == "source":
		return len(rest) > 0 && stdinFiles[rest[0].Lit()]
	case shells[name]:
		sa := readShellArgs(rest)
		return sa.unknown || !sa.c && (sa.s || sa.operand < 0 || stdinFiles[rest[sa.operand].Lit()])
	}
	return false
}

// stmt sees a statement whose command reads its script from its standard
// input: the here-documents and here-strings given to it are that script.
func (c *placer) stmt(n *syntax.Stmt, p place) bool {
	if !readsScript(n.Cmd) {
		return true
	}
	c.walk(n.Cmd, p)
	for _, r := range n.Redirs {
		q := p
		if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
			q = within(p, inReparsedScript)
		}
		c.walk(r, q)
	}
	return false
}

// binaryCmd sees a pipeline (a | b | sh): what the stages before a stage
// that reads its script from standard input write is that script.
// Whether a stage in between (cat, tee) passes it on is not known, so
// everything before the shell counts.
func (c *placer) binaryCmd(n *syntax.BinaryCmd, p place) bool {
	if n.Op != syntax.Pipe && n.Op != syntax.PipeAll {
		return true
	}
	stages := pipeStages(n)
	shell := -1
	for i, s := range stages {
		if readsScript(s.Cmd) {
			shell = i
		}
	}
	for i, s := range stages {
		q := p
		if i < shell {
			q = within(p, inReparsedScript)
		}
		c.walk(s, q)
	}
	return false
}

// pipeStages are the statements of a pipeline, which the parser nests
// as a | (b | c).
func pipeStages(n *syntax.BinaryCmd) []*syntax.Stmt {
	stages := []*syntax.Stmt{n.X}
	for {
		b, ok := n.Y.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			return append(stages, n.Y)
		}
		stages = append(stages, b.X)
		n = b
	}
}
