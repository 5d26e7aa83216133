package configref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
)

// durationPattern is a Go duration ("90s", "1m30s"), which the loader takes
// beside a number of seconds.
const durationPattern = `^((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`

// envNamePattern is the name of an environment variable, as the loader
// takes it (codeenv.CheckName).
const envNamePattern = `^[A-Za-z_][A-Za-z0-9_]*$`

// JSONSchema returns the JSON Schema of .agenttree.yaml for the hooks of
// cat, indented, ending in a newline.
func JSONSchema(cat Catalog) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Build(cat)); err != nil {
		return nil, fmt.Errorf("encode the config schema: %w", err)
	}
	return buf.Bytes(), nil
}

// Build builds the JSON Schema of .agenttree.yaml for the hooks of cat.
// The file's form decides which half applies, as it decides how the
// loader reads it: the canonical form is checked strictly (an unknown key
// is an error there), the compatible form of the earlier tool only for
// what the loader refuses in it (unknown keys and hooks are warnings).
func Build(cat Catalog) *Schema {
	defs := map[string]*Schema{
		"text":     describe(&Schema{Type: []string{"string", "number", "boolean"}}, "A string (a number or true/false is read as its text)."),
		"duration": durationSchema(),
		"strings":  describe(&Schema{AnyOf: []*Schema{ref("text"), {Type: "array", Items: ref("text")}}}, "A list of strings; one string is a list of one."),
		"envNames": describe(&Schema{Type: "array", Items: &Schema{Type: "string", Pattern: envNamePattern}},
			"Names of environment variables (letters, digits and _, not starting with a digit)."),
		"sandbox": describe(&Schema{Type: "string", Pattern: `^(none|(user|docker|podman):.+)$`},
			"none, user:NAME, docker:IMAGE or podman:IMAGE."),
		"action":        actionSchema(),
		"failurePolicy": policySchema(),
		"policyStep":    policyStepSchema(),
		"flows":         flowsSchema(ref("flowStages")),
		"flowStages":    &Schema{Type: "array", Items: ref("text")},
	}
	strict := builder{cat: cat, defs: defs}
	lax := builder{cat: cat, defs: defs, lax: true}
	for _, o := range settings.HookOptions() {
		defs["option."+o.Name] = strict.key(o.Key)
	}
	strict.addDefs()
	lax.addDefs()
	defs["compatible.flowStages"] = &Schema{AnyOf: []*Schema{ref("flowStages"), {Type: "object", AdditionalProperties: ref("compatible.stageDef")}}}
	defs["compatible.flows"] = flowsSchema(ref("compatible.flowStages"))
	return &Schema{
		SchemaURI: "https://json-schema.org/draft/2020-12/schema",
		ID:        SchemaURL,
		Title:     "agenttree pipeline (.agenttree.yaml)",
		Description: "The pipeline of an agenttree repository. Generated from agenttree's code; " +
			"see docs/CONFIG.md for the reference.",
		Type: "object",
		If:   compatibleForm(),
		Then: ref("compatible.config"),
		Else: ref("config"),
		Defs: defs,
	}
}

// compatibleForm matches a file of the earlier tool's map form, as the
// loader tells them apart: `stages:` is a mapping or, without `stages:`,
// a flow defines its stages inline in a mapping.
func compatibleForm() *Schema {
	inline := &Schema{Type: "object", Required: []string{"stages"}, Properties: map[string]*Schema{"stages": {Type: "object"}}}
	return &Schema{AnyOf: []*Schema{
		{Required: []string{"stages"}, Properties: map[string]*Schema{"stages": {Type: "object"}}},
		{
			Not:        required("stages"),
			Required:   []string{"flows"},
			Properties: map[string]*Schema{"flows": {Type: "object", Not: &Schema{AdditionalProperties: &Schema{Not: inline}}}},
		},
	}}
}

func durationSchema() *Schema {
	return describe(&Schema{AnyOf: []*Schema{
		{Type: "number", Minimum: ptr(0.0)},
		{Type: "string", Pattern: durationPattern},
	}}, `Seconds, or a duration such as "90s" or "5m".`)
}

// soloActions are the actions written on their own: every action but
// step_back_to, which names its stage.
func soloActions() []any {
	var out []any
	for _, a := range settings.Actions() {
		if a.Name != stages.ActionStepBackTo {
			out = append(out, string(a.Name))
		}
	}
	return out
}

func actionSchema() *Schema {
	return &Schema{Description: "What the failure does.", Enum: soloActions()}
}

func stepBackTo() *Schema {
	return &Schema{
		Type: "object",
		Properties: map[string]*Schema{
			"step_back_to": describe(ref("text"), "The stage or substage the issue steps back to: an earlier one, or a `redirect_only` fix stage."),
			"message":      describe(ref("text"), "What the agent is told with the step back, with {{placeholders}}. Default: the failure."),
		},
		Required:             []string{"step_back_to"},
		AdditionalProperties: Bool(false),
	}
}

func policySchema() *Schema {
	return describe(&Schema{AnyOf: []*Schema{
		ref("action"),
		stepBackTo(),
		{Type: "array", MinItems: ptr(1), Items: ref("policyStep")},
	}}, "An action (step_back, escalate, fail, ignore), {step_back_to: STAGE}, "+
		"or a list of hook entries run in order, which may end in one action.")
}

// policyStepSchema is an item of a policy list: an action, in any of its
// spellings (`- escalate`, `- escalate:`, `- step_back_to: STAGE`), or a
// hook entry.
func policyStepSchema() *Schema {
	return &Schema{AnyOf: []*Schema{
		ref("action"),
		stepBackTo(),
		{Type: "object", PropertyNames: &Schema{Enum: soloActions()}, AdditionalProperties: &Schema{Type: "null"}},
		describe(&Schema{Type: "object", Properties: map[string]*Schema{"on_failure": ref("failurePolicy")}, Required: []string{"on_failure"},
			AdditionalProperties: Bool(false)}, "Last in the list: what follows when the entries before it did not deal with the failure."),
		ref("hookEntry"),
	}}
}

// flowsSchema is `flows:`: each flow a list of stage references, or a
// mapping whose `stages:` is.
func flowsSchema(list *Schema) *Schema {
	return &Schema{Type: "object", AdditionalProperties: &Schema{AnyOf: []*Schema{
		list,
		{Type: "object", Properties: map[string]*Schema{"stages": list}, Required: []string{"stages"}, AdditionalProperties: Bool(false)},
	}}}
}

// builder builds the definitions of one form: strict for the canonical
// form, lax for the compatible one, whose definitions are named
// "compatible.NAME".
type builder struct {
	cat  Catalog
	defs map[string]*Schema
	lax  bool
}

func (b builder) name(def string) string {
	if b.lax {
		return "compatible." + def
	}
	return def
}

func (b builder) ref(def string) *Schema { return ref(b.name(def)) }

func (b builder) addDefs() {
	specs := hookSpecs(b.cat)
	for _, spec := range specs {
		b.defs[b.name("hook."+spec.Name)] = b.hookValue(spec)
	}
	b.defs[b.name("hookEntry")] = b.hookEntry(specs)
	b.defs[b.name("hooks")] = &Schema{Type: []string{"array", "null"}, Items: b.ref("hookEntry")}
	b.defs[b.name("stage")] = b.stage(true)
	b.defs[b.name("substage")] = b.stage(false)
	b.defs[b.name("config")] = b.config()
	b.defs[b.name("substageDef")] = b.stageDef(false)
	if b.lax {
		b.defs[b.name("stageDef")] = b.stageDef(true)
	}
}

// mapping is a mapping of props; strictly read, no other key is allowed.
func (b builder) mapping(props map[string]*Schema) *Schema {
	s := &Schema{Type: "object", Properties: props}
	if !b.lax {
		s.AdditionalProperties = Bool(false)
	}
	return s
}

// keys is the schema of each of ks that the form reads.
func (b builder) keys(ks []settings.Key) map[string]*Schema {
	props := map[string]*Schema{}
	for _, k := range ks {
		if k.Compat && !b.lax {
			continue
		}
		props[k.Name] = b.key(k)
	}
	return props
}

func (b builder) key(k settings.Key) *Schema {
	s := b.valueOf(k)
	doc := k.Doc
	if k.Compat && k.Means != "" {
		doc += " (The earlier tool's spelling: write `" + k.Means + "`.)"
	}
	s.Description = doc
	if k.Default != "" {
		s.Default = yamlValue(k.Default)
	}
	bound(s, k)
	return s
}

// bound gives s the least value the loader takes for k: a number below it
// is refused (a duration written as text, "90s", is not checked here).
func bound(s *Schema, k settings.Key) {
	switch k.Type {
	case settings.TypeInt:
		if least, ok := k.MinInt(); ok {
			s.Minimum = ptr(float64(least))
		}
	case settings.TypeDuration:
		if least, ok := k.MinDuration(); ok {
			s.Minimum = ptr(least.Seconds())
		}
		if k.Positive {
			s.ExclusiveMinimum = ptr(0.0)
		}
	}
}

func (b builder) valueOf(k settings.Key) *Schema {
	switch k.Type {
	case settings.TypeSection:
		return b.mapping(b.keys(k.Keys))
	case settings.TypeNames:
		return &Schema{Type: "object", AdditionalProperties: b.mapping(b.keys(k.Keys))}
	case settings.TypeStages:
		if b.lax {
			return &Schema{AnyOf: []*Schema{{Type: "array", Items: b.ref("stage")}, {Type: "object", AdditionalProperties: b.ref("stageDef")}}}
		}
		return &Schema{Type: "array", Items: b.ref("stage")}
	case settings.TypeSubstages:
		// Either form reads a mapping of name to settings, in order.
		return &Schema{AnyOf: []*Schema{{Type: []string{"array", "null"}, Items: b.ref("substage")}, {Type: "object", AdditionalProperties: b.ref("substageDef")}}}
	case settings.TypeFlows:
		return b.ref("flows")
	case settings.TypeHooks:
		return b.ref("hooks")
	case settings.TypeOnFailure:
		return b.mapping(b.keys(k.Keys))
	case settings.TypePolicy:
		return ref("failurePolicy")
	}
	return scalar(k.Type, k.Enum)
}

// scalar is the schema of a value of type t.
func scalar(t settings.Type, enum []string) *Schema {
	switch t {
	case settings.TypeInt:
		return &Schema{Type: "integer"}
	case settings.TypeNumber:
		return &Schema{Type: "number"}
	case settings.TypeBool:
		return &Schema{Type: "boolean"}
	case settings.TypeDuration:
		return ref("duration")
	case settings.TypeList:
		return ref("strings")
	case settings.TypeEnvNames:
		return ref("envNames")
	case settings.TypeEnum:
		s := &Schema{}
		for _, v := range enum {
			s.Enum = append(s.Enum, v)
		}
		return s
	case settings.TypeSandbox:
		return ref("sandbox")
	case settings.TypeAny:
		return &Schema{}
	}
	return ref("text") // strings, templates, stage references, conditions
}

// config is the whole file in the builder's form.
func (b builder) config() *Schema {
	s := b.mapping(b.keys(settings.TopLevel()))
	if b.lax {
		s.Properties["flows"] = describe(b.ref("flows"), s.Properties["flows"].Description)
	}
	return s
}

// stage is a stage (or a substage) written as a `- name:` item, or as its
// bare name.
func (b builder) stage(withSubstages bool) *Schema {
	s := b.mapping(b.stageKeys(withSubstages))
	s.Required = []string{"name"}
	return &Schema{AnyOf: []*Schema{ref("text"), s}}
}

// stageDef is the value of a stage (or substage) in a mapping of the map
// form: its definition, or nothing.
func (b builder) stageDef(withSubstages bool) *Schema {
	return &Schema{AnyOf: []*Schema{{Type: "null"}, b.mapping(b.stageKeys(withSubstages))}}
}

func (b builder) stageKeys(withSubstages bool) map[string]*Schema {
	props := b.keys(settings.StageKeys())
	if !withSubstages {
		delete(props, "substages")
	}
	return props
}

// yamlValue decodes a value written in YAML, for a JSON default.
func yamlValue(text string) any {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return text
	}
	return v
}

// jsonValue is a parameter's default as JSON writes it: a duration in
// seconds.
func jsonValue(v any) any {
	if d, ok := v.(time.Duration); ok {
		return d.Seconds()
	}
	return v
}
