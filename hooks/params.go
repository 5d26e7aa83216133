package hooks

import "time"

// Params are a hook's parameters, already type-checked by the loader.
type Params map[string]any

// String returns a string parameter or def.
func (p Params) String(name, def string) string {
	if v, ok := p[name].(string); ok {
		return v
	}
	return def
}

// Int returns an int parameter or def.
func (p Params) Int(name string, def int) int {
	if v, ok := p[name].(int); ok {
		return v
	}
	return def
}

// Bool returns a bool parameter or def.
func (p Params) Bool(name string, def bool) bool {
	if v, ok := p[name].(bool); ok {
		return v
	}
	return def
}

// Duration returns a duration parameter or def.
func (p Params) Duration(name string, def time.Duration) time.Duration {
	if v, ok := p[name].(time.Duration); ok {
		return v
	}
	return def
}

// List returns a list parameter.
func (p Params) List(name string) []string {
	v, _ := p[name].([]string)
	return v
}

// Number returns a number parameter and whether it was set.
func (p Params) Number(name string) (float64, bool) {
	v, ok := p[name].(float64)
	return v, ok
}
