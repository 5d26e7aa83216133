package hooks

import (
	"time"

	"github.com/agenttree/agenttree/stages"
)

// Params are a hook's parameters as the loader stores them, type-checked,
// under their canonical names. Hooks read them through a Param.
type Params map[string]any

// Param declares one parameter of a hook, of the Go type T the loader
// stores its values in. The one value both goes into the hook's spec
// (Spec) and reads the parameter in the hook (Get), so a misspelled name
// does not compile and the default is the one the spec declares:
//
//	var expect = hooks.Enum("expect", "what the section must hold", "empty", "not_empty").Default("not_empty")
//	...
//	switch expect.Get(c) {
type Param[T any] struct{ spec stages.Param }

func declare[T any](name string, typ stages.ParamType, doc string) Param[T] {
	return Param[T]{spec: stages.Param{Name: name, Type: typ, Doc: doc}}
}

// String declares a string parameter.
func String(name, doc string) Param[string] { return declare[string](name, stages.ParamString, doc) }

// Template declares a string parameter whose {{placeholders}} the loader
// checks against the variables a message can use.
func Template(name, doc string) Param[string] {
	return declare[string](name, stages.ParamTemplate, doc)
}

// Enum declares a string parameter that takes one of values.
func Enum(name, doc string, values ...string) Param[string] {
	p := declare[string](name, stages.ParamEnum, doc)
	p.spec.Enum = values
	return p
}

// StageRef declares a parameter naming a node of the pipeline, where the
// hook sends an issue with move. The stage machine draws its edges from it.
func StageRef(name, doc string, move stages.Move) Param[string] {
	p := declare[string](name, stages.ParamStageRef, doc)
	p.spec.Move = move
	return p
}

// Int declares an integer parameter.
func Int(name, doc string) Param[int] { return declare[int](name, stages.ParamInt, doc) }

// Number declares a number parameter (an int or a float in the config).
func Number(name, doc string) Param[float64] { return declare[float64](name, stages.ParamNumber, doc) }

// Bool declares a boolean parameter.
func Bool(name, doc string) Param[bool] { return declare[bool](name, stages.ParamBool, doc) }

// Duration declares a duration parameter (seconds, or "90s", "5m").
func Duration(name, doc string) Param[time.Duration] {
	return declare[time.Duration](name, stages.ParamDuration, doc)
}

// List declares a list-of-strings parameter.
func List(name, doc string) Param[[]string] { return declare[[]string](name, stages.ParamList, doc) }

// EnvNames declares a list of names of the controller's environment
// variables to pass to the repository's code, which the loader checks
// (stages.ParamEnvNames).
func EnvNames(name, doc string) Param[[]string] {
	return declare[[]string](name, stages.ParamEnvNames, doc)
}

// Default returns p with the value a hook gets when the config gives none.
func (p Param[T]) Default(v T) Param[T] {
	p.spec.Default = v
	return p
}

// Required returns p as a parameter the config must give.
func (p Param[T]) Required() Param[T] {
	p.spec.Required = true
	return p
}

// AtLeast returns p, an integer parameter, with the smallest value the
// config may give it.
func (p Param[T]) AtLeast(n int) Param[T] {
	p.spec.AtLeast = &n
	return p
}

// Aliases returns p with other spellings of its name (the earlier tool's).
func (p Param[T]) Aliases(names ...string) Param[T] {
	p.spec.Aliases = names
	return p
}

// Name is the parameter's canonical name.
func (p Param[T]) Name() string { return p.spec.Name }

// Spec is the parameter's declaration, for the hook's spec.
func (p Param[T]) Spec() stages.Param { return p.spec }

// Lookup returns the value the config gave, and whether it gave one.
func (p Param[T]) Lookup(c *Call) (T, bool) {
	v, ok := c.Params[p.spec.Name].(T)
	return v, ok
}

// Get returns the value the config gave, else the spec's default (T's
// zero value when the spec declares none).
func (p Param[T]) Get(c *Call) T {
	if v, ok := p.Lookup(c); ok {
		return v
	}
	def, _ := p.spec.Default.(T)
	return def
}

// Or returns the value the config gave, else def: for parameters whose
// default is one of the config's settings (ci_polling, conflict_handling)
// rather than a constant of the spec.
func (p Param[T]) Or(c *Call, def T) T {
	if v, ok := p.Lookup(c); ok {
		return v
	}
	return def
}

// ParamSpec is anything that declares a parameter: every Param[T].
type ParamSpec interface{ Spec() stages.Param }

// Specs lists the declarations of params, for a HookSpec.
func Specs(params ...ParamSpec) []stages.Param {
	out := make([]stages.Param, len(params))
	for i, p := range params {
		out[i] = p.Spec()
	}
	return out
}
