package record

import (
	"maps"
	"reflect"
	"slices"
)

// Clone is a copy of i that shares nothing with it: what one holder
// changes the other never sees. The store hands out clones of a parse it
// keeps (docs/ARCHITECTURE.md §6, the controller's passes), so a new
// field that holds a map, a slice or a pointer must be copied here too
// (TestCloneSharesNothing fails until it is).
func (i *Issue) Clone() *Issue {
	if i == nil {
		return nil
	}
	c := *i
	c.Labels = slices.Clone(i.Labels)
	c.Vars = cloneVars(i.Vars)
	c.Outputs = maps.Clone(i.Outputs)
	c.Attempts = maps.Clone(i.Attempts)
	c.History = slices.Clone(i.History)
	if i.EntryPending != nil {
		e := *i.EntryPending
		e.Failures = slices.Clone(e.Failures)
		c.EntryPending = &e
	}
	if i.Escalated != nil {
		e := *i.Escalated
		c.Escalated = &e
	}
	if i.Breaker != nil {
		b := *i.Breaker
		b.Failing, b.Fewest = slices.Clone(b.Failing), slices.Clone(b.Fewest)
		c.Breaker = &b
	}
	return &c
}

// Clone is a copy of w that shares nothing with it (see Issue.Clone).
func (w *WatchFile) Clone() *WatchFile {
	if w == nil {
		return nil
	}
	return &WatchFile{Hooks: maps.Clone(w.Hooks), Poll: w.Poll.Clone()}
}

// Clone is a copy of p that shares nothing with it (see Issue.Clone).
func (p *Poll) Clone() *Poll {
	if p == nil {
		return nil
	}
	c := *p
	c.Handled, c.Noted, c.Failing = slices.Clone(p.Handled), slices.Clone(p.Noted), slices.Clone(p.Failing)
	c.FixAttempts = maps.Clone(p.FixAttempts)
	c.Actions = slices.Clone(p.Actions)
	if p.Checks != nil {
		ch := *p.Checks
		c.Checks = &ch
	}
	return &c
}

// cloneVars copies an issue's variables to the bottom: YAML gives maps
// and lists of any depth.
func cloneVars(vars map[string]any) map[string]any {
	if vars == nil {
		return nil
	}
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		out[k] = cloneValue(v)
	}
	return out
}

// cloneValue copies v's maps, slices and pointers; anything else is a
// value already (strings, numbers, times).
func cloneValue(v any) any {
	switch v := v.(type) {
	case nil, string, bool, int, int64, uint64, float64:
		return v
	case map[string]any:
		return cloneVars(v)
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	}
	return cloneReflect(reflect.ValueOf(v)).Interface()
}

// cloneReflect is cloneValue for the kinds YAML and the engine's code
// rarely give (map[any]any, []string, a pointer).
func cloneReflect(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(cloneReflect(v.Elem()))
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), cloneReflect(it.Value()))
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(cloneReflect(v.Index(i)))
		}
		return c
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(cloneReflect(v.Elem()))
		return c
	case reflect.Struct:
		// A struct's unexported fields cannot be set one by one: it is
		// copied whole, which holds for the value types YAML gives
		// (time.Time).
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		return c
	}
	return v
}
