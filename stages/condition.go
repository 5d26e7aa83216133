package stages

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/agenttree/agenttree/internal/lines"
)

// Condition is a compiled expression over issue variables, such as
// `needs_ui_review and not hotfix`. The earlier tool wrote conditions with
// Jinja placeholders (`{{ needs_ui_review }}`, `{{ a }} and not {{ b }}`);
// that spelling is accepted.
type Condition struct {
	Src     string
	Pos     Pos
	program *vm.Program
	idents  []string
}

// jinjaRE matches one `{{ ... }}` placeholder of the earlier spelling.
var jinjaRE = regexp.MustCompile(`\{\{(.*?)\}\}`)

// ParseCondition compiles src. It is exported for tools that check a
// condition outside a config file.
func ParseCondition(src string) (*Condition, error) {
	body := strings.TrimSpace(jinjaRE.ReplaceAllStringFunc(src, func(m string) string {
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
		return nil, fmt.Errorf("cannot parse condition %q: %s", src, lines.First(err.Error()))
	}
	c := &Condition{Src: src, program: tree}
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

// Eval evaluates the condition. A variable the issue does not define is
// false, so `needs_ui_review` on an issue that never set it skips the stage.
// An expression that cannot be evaluated (comparing a number to a string,
// say) is false and the error says why.
func (c *Condition) Eval(vars map[string]any) (bool, error) {
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
		return false, fmt.Errorf("condition %q: %s", c.Src, lines.First(err.Error()))
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
