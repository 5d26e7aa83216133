// Package condition is the expression language of a config's conditions
// (a stage's `condition:`, a hook entry's `when:`): expressions over issue
// variables, compiled by expr-lang, in either spelling (package stages'
// Condition says which).
package condition

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/agenttree/agenttree/internal/lines"
)

// Program is a compiled condition.
type Program struct {
	src     string
	program *vm.Program
	idents  []string
}

// Error says why a condition does not parse, and where.
type Error struct {
	Src string
	// Offset is the byte offset in Src of the token the parser stopped
	// at; -1 when it is not known.
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("cannot parse condition %q: %s", e.Src, e.Msg)
}

// jinjaRE matches one `{{ ... }}` placeholder of the earlier spelling;
// compiled on first use, not at every command's start.
var jinjaRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{(.*?)\}\}`) })

// Compile compiles src; a syntax error is an *Error.
func Compile(src string) (*Program, error) {
	body := strings.TrimSpace(jinjaRE().ReplaceAllStringFunc(src, func(m string) string {
		// Parenthesised, so `not {{ a or b }}` keeps its meaning.
		if inner := strings.TrimSpace(m[2 : len(m)-2]); inner != "" {
			return "(" + inner + ")"
		}
		return ""
	}))
	if body == "" {
		return nil, fmt.Errorf("empty condition")
	}
	tree, err := expr.Compile(body, expr.AllowUndefinedVariables())
	if err != nil {
		ce := &Error{Src: src, Offset: -1, Msg: lines.First(err.Error())}
		var fe *file.Error
		if errors.As(err, &fe) {
			ce.Msg = fe.Message
			// Where in src the parser stopped, when src is what it read
			// (no placeholders rewritten): the byte offset of its token.
			if lead := len(src) - len(strings.TrimLeft(src, " \t")); strings.TrimSpace(src) == body && fe.From >= 0 {
				ce.Offset = lead + fe.From
			}
		}
		return nil, ce
	}
	c := &Program{src: src, program: tree}
	seen := map[string]bool{}
	collector := identCollector(func(name string) {
		if !seen[name] {
			seen[name] = true
			c.idents = append(c.idents, name)
		}
	})
	node := tree.Node()
	ast.Walk(&node, collector)
	return c, nil
}

type identCollector func(string)

func (f identCollector) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok {
		f(id.Value)
	}
}

// Names are the variables the program reads, in the order written.
func (c *Program) Names() []string { return slices.Clone(c.idents) }

// Eval evaluates the program. A variable vars does not define is false,
// so `needs_ui_review` on an issue that never set it skips the stage. An
// expression that cannot be evaluated (comparing a number to a string,
// say) is false and the error says why.
func (c *Program) Eval(vars map[string]any) (bool, error) {
	env := make(map[string]any, len(vars)+len(c.idents))
	for k, v := range vars {
		env[k] = v
	}
	for _, id := range c.idents {
		if _, ok := env[id]; !ok {
			env[id] = false
		}
	}
	out, err := expr.Run(c.program, env)
	if err != nil {
		return false, fmt.Errorf("condition %q: %s", c.src, lines.First(err.Error()))
	}
	return truthy(out), nil
}

func truthy(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.String:
		s := strings.ToLower(rv.String())
		return s != "" && s != "false" && s != "0" && s != "no"
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() > 0
	}
	return true
}
