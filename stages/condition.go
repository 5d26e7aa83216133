package stages

import "github.com/agenttree/agenttree/stages/condition"

// Condition is a compiled expression over issue variables, such as
// `needs_ui_review and not hotfix`. The earlier tool wrote conditions with
// Jinja placeholders (`{{ needs_ui_review }}`, `{{ a }} and not {{ b }}`);
// that spelling is accepted. Package stages/condition compiles and runs
// it.
type Condition struct {
	Src     string
	Pos     Pos
	program *condition.Program
}

// ConditionError says why a condition does not parse, and where.
type ConditionError = condition.Error

// ParseCondition compiles src. It is exported for tools that check a
// condition outside a config file.
func ParseCondition(src string) (*Condition, error) {
	p, err := condition.Compile(src)
	if err != nil {
		return nil, err
	}
	return &Condition{Src: src, program: p}, nil
}

// Names are the variables the condition reads, in the order written.
func (c *Condition) Names() []string { return c.program.Names() }

// Eval evaluates the condition. A variable the issue does not define is
// false, so `needs_ui_review` on an issue that never set it skips the stage.
// An expression that cannot be evaluated (comparing a number to a string,
// say) is false and the error says why.
func (c *Condition) Eval(vars map[string]any) (bool, error) { return c.program.Eval(vars) }
