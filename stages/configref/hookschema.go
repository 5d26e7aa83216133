package configref

import (
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
)

// hookEntry is an item of a hook list: the hook's bare name, or a mapping
// of one hook to its value, with the entry's options beside it. Read
// laxly (the earlier tool's files), any key may stand beside the hook,
// and a hook agenttree does not know is only warned of.
func (b builder) hookEntry(specs []stages.HookSpec) *Schema {
	props := map[string]*Schema{}
	var names []any
	var oneHook []*Schema
	for _, spec := range specs {
		for _, name := range append([]string{spec.Name}, aliasesOf(b.cat, spec.Name)...) {
			props[name] = describe(b.ref("hook."+spec.Name), hookDoc(spec, name))
			names = append(names, name)
			oneHook = append(oneHook, required(name))
		}
	}
	for _, o := range settings.HookOptions() {
		props[o.Name] = optionRef(o)
	}
	if b.lax {
		return &Schema{AnyOf: []*Schema{{Type: "string"}, {Type: "object", Properties: props}}}
	}
	m := b.mapping(props)
	m.OneOf = oneHook
	m.DependentSchemas = b.policyOptionHooks(specs)
	return &Schema{AnyOf: []*Schema{{Enum: names, Description: "A hook that takes no parameters it needs, by name."}, m}}
}

// hookDoc describes the hook, or its other name.
func hookDoc(spec stages.HookSpec, name string) string {
	if name != spec.Name {
		return "The earlier tool's name of `" + spec.Name + "`. " + spec.Doc
	}
	return spec.Doc
}

// policyOptionHooks limits each option some hooks take (on_conflict,
// on_ci_failure) to the entries of those hooks.
func (b builder) policyOptionHooks(specs []stages.HookSpec) map[string]*Schema {
	out := map[string]*Schema{}
	for _, o := range settings.HookOptions() {
		if o.For == nil {
			continue
		}
		var takers []*Schema
		for _, spec := range specs {
			if o.Takes(spec) {
				for _, name := range append([]string{spec.Name}, aliasesOf(b.cat, spec.Name)...) {
					takers = append(takers, required(name))
				}
			}
		}
		out[o.Name] = &Schema{AnyOf: takers}
	}
	return out
}

// hookValue is what a hook's key may hold: nothing (when no parameter is
// needed), the main parameter as a scalar, or a mapping of parameters,
// among which the entry's options may stand too.
func (b builder) hookValue(spec stages.HookSpec) *Schema {
	s := &Schema{Description: spec.Doc}
	if !needsParams(spec) {
		s.AnyOf = append(s.AnyOf, &Schema{Type: "null"})
	}
	if p, ok := spec.Param(spec.Main); ok && spec.Main != "" {
		s.AnyOf = append(s.AnyOf, b.param(spec, p))
	}
	s.AnyOf = append(s.AnyOf, b.params(spec))
	if v := exampleValue(spec); v != nil {
		s.Examples = []any{v}
	}
	return s
}

// exampleValue is the value the hook's example gives its key, as JSON has
// it; nil when there is none.
func exampleValue(spec stages.HookSpec) any {
	var entries []map[string]any
	if err := yaml.Unmarshal([]byte(spec.Example), &entries); err != nil || len(entries) == 0 {
		return nil
	}
	return entries[0][spec.Name]
}

// needsParams reports whether an entry of the hook must give parameters.
func needsParams(spec stages.HookSpec) bool {
	for _, p := range spec.Params {
		if p.Required {
			return true
		}
	}
	return len(spec.OneOf) > 0
}

// params is the mapping of the hook's parameters (and their other
// spellings), the options of its entry, and what it requires.
func (b builder) params(spec stages.HookSpec) *Schema {
	props := map[string]*Schema{}
	for _, o := range settings.HookOptions() {
		if o.Takes(spec) {
			props[o.Name] = optionRef(o)
		}
	}
	for _, p := range spec.Params {
		for _, name := range append([]string{p.Name}, p.Aliases...) {
			props[name] = b.param(spec, p)
		}
	}
	s := b.mapping(props)
	for _, p := range spec.Params {
		if p.Required {
			s.AllOf = append(s.AllOf, given(p))
		}
	}
	for _, group := range spec.OneOf {
		one := &Schema{}
		for _, name := range group {
			if p, ok := spec.Param(name); ok {
				one.OneOf = append(one.OneOf, given(p))
			}
		}
		s.AllOf = append(s.AllOf, one)
	}
	return s
}

// given matches a mapping that gives p, under any of its spellings.
func given(p stages.Param) *Schema {
	if len(p.Aliases) == 0 {
		return required(p.Name)
	}
	s := &Schema{}
	for _, name := range append([]string{p.Name}, p.Aliases...) {
		s.AnyOf = append(s.AnyOf, required(name))
	}
	return s
}

// param is the schema of a parameter's value. A parameter that is also
// a failure policy of the entry (poll_pr_status's on_conflict) takes the
// policy's forms.
func (b builder) param(spec stages.HookSpec, p stages.Param) *Schema {
	var s *Schema
	if o, ok := policyOption(p.Name); ok && o.Takes(spec) {
		s = ref("failurePolicy")
	} else {
		s = scalar(paramType(p.Type), p.Enum)
	}
	if p.AtLeast != nil {
		s.Minimum = ptr(float64(*p.AtLeast))
	}
	s.Description = p.Doc
	if p.Default != nil {
		s.Default = jsonValue(p.Default)
	}
	return s
}

func policyOption(name string) (settings.HookOption, bool) {
	for _, o := range settings.HookOptions() {
		if o.Name == name && o.Type == settings.TypePolicy {
			return o, true
		}
	}
	return settings.HookOption{}, false
}

// paramType is the type of the reference for a hook parameter's type.
func paramType(t stages.ParamType) settings.Type {
	switch t {
	case stages.ParamTemplate:
		return settings.TypeTemplate
	case stages.ParamInt:
		return settings.TypeInt
	case stages.ParamNumber:
		return settings.TypeNumber
	case stages.ParamBool:
		return settings.TypeBool
	case stages.ParamDuration:
		return settings.TypeDuration
	case stages.ParamStageRef:
		return settings.TypeStageRef
	case stages.ParamList:
		return settings.TypeList
	case stages.ParamEnvNames:
		return settings.TypeEnvNames
	case stages.ParamEnum:
		return settings.TypeEnum
	case stages.ParamAny:
		return settings.TypeAny
	}
	return settings.TypeString
}

// optionRef is the schema of the option o, defined once for every entry.
func optionRef(o settings.HookOption) *Schema { return ref("option." + o.Name) }
