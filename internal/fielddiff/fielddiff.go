// Package fielddiff says, field by field, how two values of one struct
// type differ, as a person reads it: "stage: implement.code → accepted",
// "entry_pending added", "history: 3 → 4 entries". Values are shown safe
// for a terminal and bounded: they may come from a file someone edited.
package fielddiff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/internal/textsafe"
)

// maxValueShown bounds a value a change shows.
const maxValueShown = 60

// Of lists how now differs from was, both values of the struct type T
// seen through their JSON members: top-level fields in declaration order,
// those named in skip left out.
func Of[T any](was, now *T, skip ...string) []string {
	a, b := fields(was), fields(now)
	for _, k := range skip {
		delete(a, k)
		delete(b, k)
	}
	return diffMaps("", a, b, fieldOrder[T]())
}

// Maps lists how now differs from was, objects as encoding/json decodes
// them into map[string]any (a record read from a file, whose type the
// caller does not have): top-level members in the order of their names.
func Maps(was, now map[string]any) []string { return diffMaps("", was, now, nil) }

// fields is v as a map of its JSON members.
func fields(v any) map[string]any {
	var m map[string]any
	data, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		return map[string]any{}
	}
	return m
}

// fieldOrder ranks T's JSON members in declaration order.
func fieldOrder[T any]() map[string]int {
	t := reflect.TypeFor[T]()
	rank := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		rank[name] = i
	}
	return rank
}

func diffMaps(prefix string, a, b map[string]any, rank map[string]int) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y string) int {
		if rx, ry := rankOf(rank, x), rankOf(rank, y); rx != ry {
			return rx - ry
		}
		return strings.Compare(x, y)
	})
	var out []string
	for _, k := range keys {
		name := prefix + textsafe.Line(k, maxValueShown)
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inA:
			out = append(out, name+" added")
		case !inB:
			out = append(out, name+" removed")
		case reflect.DeepEqual(va, vb):
		default:
			out = append(out, diffValues(name, va, vb)...)
		}
	}
	return out
}

func rankOf(rank map[string]int, k string) int {
	if r, ok := rank[k]; ok {
		return r
	}
	return len(rank)
}

func diffValues(name string, va, vb any) []string {
	ma, okA := va.(map[string]any)
	mb, okB := vb.(map[string]any)
	if okA && okB {
		return diffMaps(name+".", ma, mb, nil)
	}
	la, okA := va.([]any)
	lb, okB := vb.([]any)
	switch {
	case okA && okB && len(la) != len(lb):
		return []string{fmt.Sprintf("%s: %d → %d entries", name, len(la), len(lb))}
	case okA && okB:
		return []string{name + " changed"}
	}
	return []string{fmt.Sprintf("%s: %s → %s", name, show(va), show(vb))}
}

// show is a JSON value as a change shows it.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if v == "" {
			return `""`
		}
		return textsafe.Line(v, maxValueShown)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return "(changed)"
}
