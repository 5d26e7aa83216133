// Package settings declares the keys of .agenttree.yaml once. Each key of
// the top level is one Key: its name, type, allowed values or least
// value, default, documentation, and the field of stages.Config it is
// read into. The defaults (Defaults), the loader's reading and checking
// of the top level (package stages/load), and the JSON Schema and
// docs/CONFIG.md (package stages/configref) all come from it. The keys of
// stages and hook entries are declared here for the reference only: the
// loader reads them with readers of their own, which carry both of the
// config's spellings and the hook catalog.
package settings

import (
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// Type is the kind of value a key of .agenttree.yaml takes.
type Type string

const (
	TypeString    Type = "string"
	TypeTemplate  Type = "template" // a string with {{placeholders}}
	TypeInt       Type = "int"
	TypeNumber    Type = "number"
	TypeBool      Type = "bool"
	TypeDuration  Type = "duration"  // seconds, or "90s", "5m"
	TypeList      Type = "list"      // a list of strings; one string is a list of one
	TypeEnvNames  Type = "env names" // a list of names of environment variables
	TypeEnum      Type = "enum"
	TypeStageRef  Type = "stage"     // a node of the pipeline: `stage` or `stage.substage`
	TypeCondition Type = "condition" // an expression over issue variables
	TypeSection   Type = "mapping"   // a mapping of the keys Keys lists
	TypeNames     Type = "names"     // a mapping of names, each entry of the keys Keys lists
	TypeStages    Type = "stages"
	TypeSubstages Type = "substages"
	TypeFlows     Type = "flows"
	TypeHooks     Type = "hooks"      // a list of hook entries
	TypeOnFailure Type = "on_failure" // a stage's on_failure
	TypePolicy    Type = "policy"     // a hook entry's failure policy
	TypeSandbox   Type = "sandbox"
	TypeAny       Type = "any"
)

// Key is a key of .agenttree.yaml.
type Key struct {
	Name string
	Type Type
	// Enum lists the values of a TypeEnum.
	Enum []string
	// Min is, in YAML, the least value of a TypeInt or TypeDuration ("0",
	// "1s"); "" for none.
	Min string
	// Positive says a TypeDuration must be more than zero: a zero
	// interval would spin.
	Positive bool
	// Default is, in YAML, the value a file that leaves the key out gets;
	// "" when there is none worth writing (the Doc says what happens).
	Default string
	// Example is, in YAML, a value to show (and to load in tests) for a
	// key without a Default.
	Example string
	Doc     string
	// Keys are the keys of a TypeSection, or of each entry of a TypeNames.
	Keys []Key
	// Compat marks the earlier tool's spelling, read only in the
	// compatible form; Means says what the canonical form writes instead.
	Compat bool
	Means  string
	// Field binds the key to where its value is read into: given the
	// struct the key is read into (the *stages.Config at the top level, a
	// section's struct inside it, an entry's for a mapping of names), a
	// pointer to the key's field. nil for a key read apart from the
	// settings (stages, flows, the entries of a mapping of names).
	Field func(parent any) any
}

// Value is the key's value to show or load: its default, else its example.
func (k Key) Value() string {
	if k.Default != "" {
		return k.Default
	}
	return k.Example
}

// at binds a key to the field of the struct P that field points to.
func at[P any](field func(*P) any) func(any) any {
	return func(parent any) any { return field(parent.(*P)) }
}

// MinInt is the least value of a TypeInt, false when it has none.
func (k Key) MinInt() (int, bool) {
	if k.Min == "" {
		return 0, false
	}
	n, err := strconv.Atoi(k.Min)
	if err != nil {
		panic(fmt.Sprintf("settings: key %s: min %q: %v", k.Name, k.Min, err))
	}
	return n, true
}

// MinDuration is the least value of a TypeDuration, false when it has
// none.
func (k Key) MinDuration() (time.Duration, bool) {
	if k.Min == "" {
		return 0, false
	}
	d, err := ParseDuration(k.Min)
	if err != nil {
		panic(fmt.Sprintf("settings: key %s: min %q: %v", k.Name, k.Min, err))
	}
	return d, true
}

// ParseDuration reads a duration as a config writes one: a number of
// seconds, or a Go duration ("90s").
func ParseDuration(text string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(text, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(text); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("expected a duration (seconds, or like \"90s\", \"5m\"), got %q", text)
}

// setDefaults gives the fields of parent that ks bind their defaults,
// and the keys of its sections theirs.
func setDefaults(ks []Key, parent any) {
	for _, k := range ks {
		switch {
		case k.Field == nil || k.Compat:
		case k.Type == TypeSection:
			setDefaults(k.Keys, k.Field(parent))
		case k.Default != "":
			if err := setScalar(k.Field(parent), k.Default); err != nil {
				panic(fmt.Sprintf("settings: the default of %s: %v", k.Name, err))
			}
		}
	}
}

// setScalar sets the string, bool, int or duration field points to from
// text, a YAML scalar.
func setScalar(field any, text string) error {
	v := reflect.ValueOf(field).Elem()
	switch v.Kind() {
	case reflect.String:
		if s, err := strconv.Unquote(text); err == nil {
			text = s
		}
		v.SetString(text)
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		if v.Type() == reflect.TypeFor[time.Duration]() {
			d, err := ParseDuration(text)
			if err != nil {
				return err
			}
			v.SetInt(int64(d))
			return nil
		}
		n, err := strconv.Atoi(text)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
	default:
		return fmt.Errorf("a default for a field of type %s", v.Type())
	}
	return nil
}
