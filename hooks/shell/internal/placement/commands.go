package placement

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call sees a simple command, some of whose arguments may be code again,
// or names.
func (c *placer) call(n *syntax.CallExpr, p place) {
	for _, a := range n.Assigns {
		c.walk(a, p)
	}
	for i, q := range c.argPlaces(n.Args) {
		c.walk(n.Args[i], within(p, q))
	}
}

// argPlaces says where each of a simple command's arguments stands: the
// command that runs is found past the wrappers that run it (command
// eval ..., env A=1 sh -c ...), and the script of sh -c wherever the
// shell stands among the arguments (sudo sh -c ...).
func (c *placer) argPlaces(args []*syntax.Word) []place {
	places := make([]place, len(args))
	cmd := commandWord(args)
	for i, w := range args[:cmd] {
		places[i] = c.values[assignedName(w)] // env NAME=value
	}
	if cmd < len(args) {
		name, rest := cmdName(args[cmd]), places[cmd+1:]
		if cmd > 0 && declarations[name] {
			// Not a declaration to the parser (command declare ...): bash
			// splits its words, and parses arrays in them, as it runs.
			fill(rest, inDeclWord)
		} else {
			c.builtinPlaces(name, args[cmd+1:], rest)
		}
	}
	for _, i := range shellScripts(args) {
		places[i] = inReparsedScript
	}
	return places
}

// declarations are the builtins that take NAME=value words.
var declarations = map[string]bool{"declare": true, "typeset": true, "local": true, "export": true, "readonly": true}

// builtinPlaces marks the arguments (args, with their places) of the
// builtins that read them as code or as names.
func (c *placer) builtinPlaces(name string, args []*syntax.Word, places []place) {
	switch name {
	case "eval", "trap", "alias":
		fill(places, inReparsedScript)
	case "read":
		names(args, places, "dinNptu")
	case "unset":
		names(args, places, "")
	case "printf":
		c.printfPlaces(args, places)
	case "test", "[":
		for i := 1; i < len(args); i++ {
			if flag := args[i-1].Lit(); flag == "-v" || flag == "-R" {
				places[i] = inName
			}
		}
	default:
		if declarations[name] { // a plain command to the POSIX parser: export NAME=value
			for i, w := range args {
				places[i] = c.values[assignedName(w)]
			}
		}
	}
}

func fill(places []place, p place) {
	for i := range places {
		places[i] = p
	}
}

// names marks every argument of read or unset as a name, except the
// values of the options in valued (read -p PROMPT): everything else they
// take is a name or an option.
func names(args []*syntax.Word, places []place, valued string) {
	for i := 0; i < len(args); i++ {
		places[i] = inName
		flag := args[i].Lit()
		if len(flag) > 1 && flag[0] == '-' && strings.IndexAny(flag[1:], valued) == len(flag)-2 {
			i++ // an option that ends its word takes the next as its value
		}
	}
}

// printfPlaces marks the NAME of printf -v NAME, and the format when a
// value could begin it: bash takes a format that begins with -v as that
// option, until `--`.
func (c *placer) printfPlaces(args []*syntax.Word, places []place) {
	i := 0
	for ; i < len(args); i++ {
		flag := args[i].Lit()
		if flag == "--" {
			return
		}
		if !strings.HasPrefix(flag, "-v") {
			break
		}
		places[i] = inName
		if flag == "-v" && i+1 < len(args) {
			i++
			places[i] = inName
		}
	}
	if i < len(args) && c.mayBeginWithValue(args[i]) {
		places[i] = inPrintfFormat
	}
}

// mayBeginWithValue reports whether a word may begin with a value when it
// runs: with a placeholder, or an expansion, rather than literal text.
func (c *placer) mayBeginWithValue(w *syntax.Word) bool {
	var lit string
	switch part := w.Parts[0].(type) {
	case *syntax.Lit:
		lit = part.Value
	case *syntax.SglQuoted:
		lit = part.Value
	case *syntax.DblQuoted:
		if len(part.Parts) > 0 {
			if l, ok := part.Parts[0].(*syntax.Lit); ok {
				lit = l.Value
			}
		}
	}
	return lit == "" || strings.HasPrefix(lit, c.m.base)
}

// wrapper is a command that runs the command its arguments name.
type wrapper struct {
	short    string   // its short options that take an argument
	long     []string // its long options that take the next word
	operands int      // how many operands come before the command (timeout's duration)
	assigns  bool     // NAME=value words come before the command (env)
}

// wrappers are the commands that run the rest of their arguments as a
// command: the builtins that run builtins, and common programs that run
// programs.
var wrappers = map[string]wrapper{
	"builtin": {},
	"command": {},
	"doas":    {short: "Cu"},
	"env":     {short: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, assigns: true},
	"exec":    {short: "a"},
	"nice":    {short: "n", long: []string{"--adjustment"}},
	"nohup":   {},
	"setsid":  {},
	"stdbuf":  {short: "ioe", long: []string{"--input", "--output", "--error"}},
	"sudo": {short: "CDgpRrTtUu", assigns: true, long: []string{"--close-from", "--chdir", "--group", "--prompt", "--chroot",
		"--role", "--type", "--command-timeout", "--other-user", "--user"}},
	"time":    {short: "fo", long: []string{"--format", "--output"}},
	"timeout": {short: "sk", long: []string{"--signal", "--kill-after"}, operands: 1},
}

// commandWord is the index in args of the word naming the command that
// runs: past the wrappers that run it, their options and operands, and
// env's NAME=value words. It is len(args) if a wrapper runs nothing.
func commandWord(args []*syntax.Word) int {
	i := 0
	for i < len(args) {
		w, ok := wrappers[cmdName(args[i])]
		if !ok {
			return i
		}
		i = w.skip(args, i+1)
	}
	return i
}

// skip is the index of the first word from args[i] on that is not one of
// the wrapper's options, operands or assignments.
func (w wrapper) skip(args []*syntax.Word, i int) int {
	for ; i < len(args); i++ {
		flag := args[i].Lit()
		if flag == "--" {
			i++
			break
		}
		if flag == "" || flag[0] != '-' {
			break
		}
		if w.takesNext(flag) {
			i++
		}
	}
	i += w.operands
	for w.assigns && i < len(args) && assignedName(args[i]) != "" {
		i++
	}
	return min(i, len(args))
}

// takesNext reports whether an option word takes the next word as its
// argument: one of the long options, or a group of short options that
// ends in one taking an argument (-s KILL, -ks KILL; not -sKILL).
func (w wrapper) takesNext(flag string) bool {
	if strings.HasPrefix(flag, "--") {
		return slices.Contains(w.long, flag)
	}
	return len(flag) > 1 && strings.IndexAny(flag[1:], w.short) == len(flag)-2
}

// cmdName is the command a word names, without its directory; "" when
// the word is not all literal.
func cmdName(w *syntax.Word) string {
	lit := w.Lit()
	if lit == "" {
		return ""
	}
	return path.Base(lit)
}

// assignedName is the variable a NAME=value word assigns to; "" if the
// word is not one.
func assignedName(w *syntax.Word) string {
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return ""
	}
	name, _, found := strings.Cut(lit.Value, "=")
	if !found || !syntax.ValidName(name) {
		return ""
	}
	return name
}
