package configref

import "encoding/json"

// Schema is a JSON Schema (draft 2020-12), with the keywords the config's
// schema uses, in the order a reader expects them.
type Schema struct {
	SchemaURI        string             `json:"$schema,omitempty"`
	ID               string             `json:"$id,omitempty"`
	Ref              string             `json:"$ref,omitempty"`
	Title            string             `json:"title,omitempty"`
	Description      string             `json:"description,omitempty"`
	Type             any                `json:"type,omitempty"` // a name, or a list of names
	Enum             []any              `json:"enum,omitempty"`
	Const            any                `json:"const,omitempty"`
	Default          any                `json:"default,omitempty"`
	Pattern          string             `json:"pattern,omitempty"`
	Minimum          *float64           `json:"minimum,omitempty"`
	ExclusiveMinimum *float64           `json:"exclusiveMinimum,omitempty"`
	MinItems         *int               `json:"minItems,omitempty"`
	Properties       map[string]*Schema `json:"properties,omitempty"`
	Required         []string           `json:"required,omitempty"`
	// PropertyNames constrains the keys of a mapping of names.
	PropertyNames        *Schema            `json:"propertyNames,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	DependentSchemas     map[string]*Schema `json:"dependentSchemas,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	Not                  *Schema            `json:"not,omitempty"`
	If                   *Schema            `json:"if,omitempty"`
	Then                 *Schema            `json:"then,omitempty"`
	Else                 *Schema            `json:"else,omitempty"`
	Examples             []any              `json:"examples,omitempty"`
	Defs                 map[string]*Schema `json:"$defs,omitempty"`

	// boolean, when set, makes the schema the boolean schema true or
	// false.
	boolean *bool
}

// Bool is the boolean schema b: true accepts anything, false nothing.
func Bool(b bool) *Schema { return &Schema{boolean: &b} }

// MarshalJSON writes a boolean schema as true or false.
func (s *Schema) MarshalJSON() ([]byte, error) {
	if s.boolean != nil {
		return json.Marshal(*s.boolean)
	}
	type plain Schema // without this method
	return json.Marshal((*plain)(s))
}

// ref is a schema that is the definition name.
func ref(name string) *Schema { return &Schema{Ref: "#/$defs/" + name} }

// describe returns s with its description set.
func describe(s *Schema, doc string) *Schema {
	s.Description = doc
	return s
}

func required(names ...string) *Schema { return &Schema{Required: names} }

func ptr[T any](v T) *T { return &v }
