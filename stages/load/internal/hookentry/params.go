package hookentry

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// params reads a hook's value: nothing, its main parameter as a scalar, or
// a mapping of parameters (common options may be among them). given maps
// each parameter written, even with a bad value, to its spelling, so a bad
// value is not also reported missing.
func (r *Reader) params(h *stages.HookEntry, spec stages.HookSpec, value *yaml.Node, o ledger.Owner) (given map[string]string, ok bool) {
	given = map[string]string{}
	switch {
	case yamlnode.IsNull(value):
	case value.Kind == yaml.MappingNode:
		instead := missingRequired(spec, value)
		for _, p := range yamlnode.Pairs(value) {
			if r.isOption(spec, p.Key.Value) {
				r.option(h, p.Key, p.Val, o)
				continue
			}
			if _, known := spec.Param(p.Key.Value); !known && len(instead) == 1 && !r.d.Lax {
				// One unknown key where one required parameter is missing
				// is that parameter misnamed: one error, naming it.
				r.d.Errorf(r.d.Pos(p.Key), fmt.Sprintf("did you mean `%s`? the hook needs it", instead[0]),
					"hook `%s` has no parameter `%s`", h.Name, p.Key.Value)
				given[instead[0]] = p.Key.Value
				instead = nil
				continue
			}
			r.param(h, spec, p.Key, p.Val, o, given)
		}
	case spec.Main == "":
		r.d.Errorf(r.d.Pos(value), noShortForm(h, spec), "hook `%s` takes no main parameter", h.Name)
		return nil, false
	default:
		r.param(h, spec, yamlnode.ScalarAt(value, "!!str", spec.Main), value, o, given)
	}
	return given, true
}

// missingRequired lists the required parameters of spec that the mapping
// m gives under no spelling.
func missingRequired(spec stages.HookSpec, m *yaml.Node) []string {
	var out []string
	for _, p := range spec.Params {
		if !p.Required {
			continue
		}
		given := slices.ContainsFunc(yamlnode.Pairs(m), func(kv yamlnode.Pair) bool {
			q, ok := spec.Param(kv.Key.Value)
			return ok && q.Name == p.Name
		})
		if !given {
			out = append(out, p.Name)
		}
	}
	return out
}

// noShortForm says how to write a hook that takes no single value: with
// its required parameters named.
func noShortForm(h *stages.HookEntry, spec stages.HookSpec) string {
	var required []string
	for _, p := range spec.Params {
		if p.Required {
			required = append(required, p.Name+": ...")
		}
	}
	for _, group := range spec.OneOf {
		required = append(required, strings.Join(group, " or ")+": ...")
	}
	if len(required) == 0 {
		return fmt.Sprintf("write `%s:` with no value, or its parameters as `%s: {name: value}`", h.Name, h.Name)
	}
	return fmt.Sprintf("name its parameters: `%s: {%s}`", h.Name, strings.Join(required, ", "))
}

// isOption says whether key, among a hook's parameters, is an option of
// the entry instead: a policy option always, a common option unless the
// hook has a parameter of that name.
func (r *Reader) isOption(spec stages.HookSpec, key string) bool {
	if slices.Contains(policyOptions(spec), key) {
		return true
	}
	_, isParam := spec.Param(key)
	return !isParam && slices.Contains(commonOptions, key)
}

func (r *Reader) param(h *stages.HookEntry, spec stages.HookSpec, key, val *yaml.Node, o ledger.Owner, given map[string]string) {
	p, ok := spec.Param(key.Value)
	if !ok {
		r.unknownParam(h, spec, key)
		return
	}
	if first, dup := given[p.Name]; dup {
		if first != key.Value { // the same spelling twice is a duplicate key, reported already
			r.d.Errorf(r.d.Pos(key), "keep one spelling", "hook `%s` parameter `%s` is given twice (`%s` is another spelling of it)", h.Name, p.Name, key.Value)
		}
		return
	}
	given[p.Name] = key.Value
	if p.Type == stages.ParamEnvNames {
		var names []string
		if r.d.EnvNamesVar(val, fmt.Sprintf("hook `%s` parameter `%s`", h.Name, key.Value), &names) {
			h.Params[p.Name] = names
		}
		return
	}
	v, err := paramValue(p.Type, val)
	if err != nil {
		r.d.Errorf(r.d.Pos(val), "", "hook `%s` parameter `%s`: %s", h.Name, key.Value, err)
		return
	}
	if n, ok := v.(int); ok && p.AtLeast != nil && n < *p.AtLeast {
		r.d.Errorf(r.d.Pos(val), fmt.Sprintf("use %d or more", *p.AtLeast),
			"hook `%s` parameter `%s` must be at least %d, got %d", h.Name, key.Value, *p.AtLeast, n)
		return
	}
	if s, _ := v.(string); p.Type == stages.ParamEnum && !slices.Contains(p.Enum, s) {
		r.d.Errorf(r.d.Pos(val), diag.Suggest(s, p.Enum), "hook `%s` parameter `%s` must be one of %s, got %q", h.Name, p.Name, strings.Join(p.Enum, ", "), s)
		return
	}
	h.Params[p.Name] = v
	switch p.Type {
	case stages.ParamTemplate:
		r.led.Template(r.d.Pos(val), v.(string), h.Name+"."+p.Name, r.vars...)
	case stages.ParamStageRef:
		r.led.Refer(&ledger.Ref{Pos: r.d.Pos(val), From: o, Ref: v.(string),
			Set: func(path string) { h.Params[p.Name] = path }, What: h.Name + "." + key.Value, Verb: refVerb(h, spec, p), Move: p.MoveKind()})
	}
}

// paramValue decodes a parameter's value into the Go type of its type.
func paramValue(t stages.ParamType, val *yaml.Node) (any, error) {
	switch t {
	case stages.ParamString, stages.ParamTemplate, stages.ParamStageRef, stages.ParamEnum:
		return anyOf(yamlnode.String(val))
	case stages.ParamInt:
		return anyOf(yamlnode.Int(val))
	case stages.ParamNumber:
		return anyOf(yamlnode.Number(val))
	case stages.ParamBool:
		return anyOf(yamlnode.Bool(val))
	case stages.ParamDuration:
		return anyOf(yamlnode.Duration(val))
	case stages.ParamList:
		return anyOf(yamlnode.Strings(val))
	}
	var v any
	err := val.Decode(&v)
	return v, err
}

func anyOf[T any](v T, err error) (any, error) { return v, err }

// refVerb says what sends an issue to the stage p names, in messages:
// "whose on_fail sends issues to ...".
func refVerb(h *stages.HookEntry, spec stages.HookSpec, p stages.Param) string {
	switch p.Name {
	case "on_fail":
		return "on_fail"
	case spec.Main:
		return h.Name // rollback, step_back
	}
	return h.Name + " " + p.Name
}

func (r *Reader) unknownParam(h *stages.HookEntry, spec stages.HookSpec, key *yaml.Node) {
	var known []string
	for _, p := range spec.Params {
		known = append(known, p.Name)
		known = append(known, p.Aliases...)
	}
	hint := diag.Suggest(key.Value, append(known, optionsOf(spec)...))
	if hint == "" {
		hint = "known parameters: " + strings.Join(known, ", ")
	}
	r.d.Tolerate(r.d.Pos(key), diag.Tolerable{
		Msg:    fmt.Sprintf("hook `%s` has no parameter `%s`", h.Name, key.Value),
		LaxMsg: fmt.Sprintf("hook `%s` has no parameter `%s`; it is ignored", h.Name, key.Value),
		Hint:   hint,
	})
}

// checkGiven reports required parameters left out, and groups of
// alternatives not given exactly once.
func (r *Reader) checkGiven(h *stages.HookEntry, spec stages.HookSpec, given map[string]string) {
	for _, p := range spec.Params {
		if _, ok := given[p.Name]; p.Required && !ok {
			r.d.Errorf(h.Pos, fmt.Sprintf("add `%s:`", p.Name), "hook `%s` needs parameter `%s`", h.Name, p.Name)
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
			r.d.Errorf(h.Pos, "add one of them", "hook `%s` needs %s", h.Name, diag.OrList(group))
		case n > 1:
			r.d.Errorf(h.Pos, "keep one", "hook `%s` takes %s, not both", h.Name, diag.OrList(group))
		}
	}
}
