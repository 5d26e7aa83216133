package sandbox

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The agent's command is only read here to name the program it starts,
// so that a start can say "claude is not installed" before it makes a
// worktree. sh runs the command itself; what these functions cannot work
// out for certain is left to it, never guessed. They stand in for
// mvdan.cc/sh's interp and expand packages, which would link a whole
// shell interpreter into every command for a list of names and the
// expansion of one word.

// isBuiltin reports whether name is a POSIX or bash builtin: a command
// that starts with one runs no program to look for. A switch, not a
// table: nothing is built at package initialisation for the commands
// that start no agent.
func isBuiltin(name string) bool {
	switch name {
	case "alias", "bg", "cd", "command", "false", "fc", "fg", "getopts", "hash", "jobs", "kill",
		"newgrp", "pwd", "read", "true", "umask", "unalias", "wait",
		"break", ":", "continue", ".", "eval", "exec", "exit", "export", "readonly", "return",
		"set", "shift", "times", "trap", "unset",
		"source", "bind", "builtin", "caller", "compgen", "complete", "compopt", "declare", "typeset",
		"dirs", "disown", "enable", "history", "help", "let", "local", "logout", "mapfile", "readarray",
		"popd", "pushd", "shopt", "suspend", "type", "ulimit", "echo", "printf", "test", "[":
		return true
	}
	return false
}

// literal is the value sh gives word, with getenv for the environment:
// plain, quoted and escaped text, $NAME and ${NAME}, and a leading ~ or
// ~/. ok is false for any other expansion (a command substitution,
// ${NAME:-x}, $'...', a glob is kept as text as sh keeps an unmatched one).
func literal(word *syntax.Word, getenv func(string) string) (value string, ok bool) {
	var b strings.Builder
	for i, part := range word.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) {
				b.WriteString(getenv("HOME"))
				v = v[1:]
			} else if i == 0 && strings.HasPrefix(v, "~") {
				return "", false // ~user
			}
			b.WriteString(unescape(v, func(byte) bool { return true }))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.WriteString(unescape(q.Value, func(c byte) bool { return strings.IndexByte("$`\"\\\n", c) >= 0 }))
				case *syntax.ParamExp:
					v, ok := param(q, getenv)
					if !ok {
						return "", false
					}
					b.WriteString(v)
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			v, ok := param(p, getenv)
			if !ok {
				return "", false
			}
			b.WriteString(v)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// param is the value of $NAME or ${NAME}; ok is false for any other
// parameter expansion. The node's length tells a plain one from one with
// an operator, whatever fields the parser has for the operators.
func param(p *syntax.ParamExp, getenv func(string) string) (string, bool) {
	if p.Param == nil || !isName(p.Param.Value) {
		return "", false
	}
	n := len(p.Param.Value)
	switch int(p.End().Offset() - p.Pos().Offset()) {
	case n + 1: // $NAME
		if !p.Short {
			return "", false
		}
	case n + 3: // ${NAME}
		if p.Short {
			return "", false
		}
	default:
		return "", false
	}
	return getenv(p.Param.Value), true
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// unescape removes the backslashes of s that escape a byte escapes
// allows, and a backslash-newline (a line continuation).
func unescape(s string, escapes func(byte) bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && escapes(s[i+1]) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
