package stages

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// params reads a hook's value: nothing, its main parameter as a scalar, or
// a mapping of parameters (common options may be among them). given maps
// each parameter written, even with a bad value, to its spelling, so a bad
// value is not also reported missing.
func (r *hookReader) params(h *HookEntry, spec HookSpec, value *yaml.Node, o owner) (given map[string]string, ok bool) {
	given = map[string]string{}
	switch {
	case isNull(value):
	case value.Kind == yaml.MappingNode:
		for _, p := range pairs(value) {
			if _, isParam := spec.Param(p.key.Value); !isParam && slices.Contains(commonOptions, p.key.Value) {
				r.option(h, p.key, p.val, o)
				continue
			}
			r.param(h, spec, p.key, p.val, o, given)
		}
	case spec.Main == "":
		r.d.errorf(r.d.pos(value), fmt.Sprintf("write `%s:` with no value, or `%s: {param: value}`", h.Name, h.Name), "hook `%s` takes no main parameter", h.Name)
		return nil, false
	default:
		r.param(h, spec, scalarAt(value, "!!str", spec.Main), value, o, given)
	}
	return given, true
}

func (r *hookReader) param(h *HookEntry, spec HookSpec, key, val *yaml.Node, o owner, given map[string]string) {
	p, ok := spec.Param(key.Value)
	if !ok {
		r.unknownParam(h, spec, key)
		return
	}
	if first, dup := given[p.Name]; dup {
		if first != key.Value { // the same spelling twice is a duplicate key, reported already
			r.d.errorf(r.d.pos(key), "keep one spelling", "hook `%s` parameter `%s` is given twice (`%s` is another spelling of it)", h.Name, p.Name, key.Value)
		}
		return
	}
	given[p.Name] = key.Value
	v, err := paramValue(p.Type, val)
	if err != nil {
		r.d.errorf(r.d.pos(val), "", "hook `%s` parameter `%s`: %s", h.Name, key.Value, err)
		return
	}
	if s, _ := v.(string); p.Type == ParamEnum && !slices.Contains(p.Enum, s) {
		r.d.errorf(r.d.pos(val), suggest(s, p.Enum), "hook `%s` parameter `%s` must be one of %s, got %q", h.Name, p.Name, strings.Join(p.Enum, ", "), s)
		return
	}
	h.Params[p.Name] = v
	switch p.Type {
	case ParamTemplate:
		r.led.template(r.d.pos(val), v.(string), h.Name+"."+p.Name)
	case ParamStageRef:
		r.led.refer(&stageRef{pos: r.d.pos(val), from: o, ref: v.(string),
			set: func(path string) { h.Params[p.Name] = path }, what: h.Name + "." + key.Value, verb: refVerb(h, spec, p)})
	}
}

// paramValue decodes a parameter's value into the Go type of its type.
func paramValue(t ParamType, val *yaml.Node) (any, error) {
	switch t {
	case ParamString, ParamTemplate, ParamStageRef, ParamEnum:
		return anyOf(scalarString(val))
	case ParamInt:
		return anyOf(scalarInt(val))
	case ParamNumber:
		return anyOf(scalarNumber(val))
	case ParamBool:
		return anyOf(scalarBool(val))
	case ParamDuration:
		return anyOf(scalarDuration(val))
	case ParamList:
		return anyOf(stringList(val))
	}
	var v any
	err := val.Decode(&v)
	return v, err
}

func anyOf[T any](v T, err error) (any, error) { return v, err }

// refVerb says what sends an issue to the stage p names, in messages:
// "whose on_fail sends issues to ...".
func refVerb(h *HookEntry, spec HookSpec, p Param) string {
	switch p.Name {
	case "on_fail":
		return "on_fail"
	case spec.Main:
		return h.Name // rollback, step_back
	}
	return h.Name + " " + p.Name
}

func (r *hookReader) unknownParam(h *HookEntry, spec HookSpec, key *yaml.Node) {
	var known []string
	for _, p := range spec.Params {
		known = append(known, p.Name)
		known = append(known, p.Aliases...)
	}
	hint := suggest(key.Value, append(known, commonOptions...))
	if hint == "" {
		hint = "known parameters: " + strings.Join(known, ", ")
	}
	r.d.tolerate(r.d.pos(key), tolerable{
		msg:    fmt.Sprintf("hook `%s` has no parameter `%s`", h.Name, key.Value),
		laxMsg: fmt.Sprintf("hook `%s` has no parameter `%s`; it is ignored", h.Name, key.Value),
		hint:   hint,
	})
}

// checkGiven reports required parameters left out, and groups of
// alternatives not given exactly once.
func (r *hookReader) checkGiven(h *HookEntry, spec HookSpec, given map[string]string) {
	for _, p := range spec.Params {
		if _, ok := given[p.Name]; p.Required && !ok {
			r.d.errorf(h.Pos, fmt.Sprintf("add `%s:`", p.Name), "hook `%s` needs parameter `%s`", h.Name, p.Name)
		}
	}
	for _, group := range spec.OneOf {
		n := 0
		for _, name := range group {
			if _, ok := given[name]; ok {
				n++
			}
		}
		switch {
		case n == 0:
			r.d.errorf(h.Pos, "add one of them", "hook `%s` needs %s", h.Name, orList(group))
		case n > 1:
			r.d.errorf(h.Pos, "keep one", "hook `%s` takes %s, not both", h.Name, orList(group))
		}
	}
}

// orList spells alternatives: "`text` or `values`".
func orList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	if len(q) <= 2 {
		return strings.Join(q, " or ")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
