package record

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// fill sets every field reachable from v to something not zero: a
// field added to the types and forgotten by Clone is then shared, or
// lost, and TestCloneSharesNothing says so.
func fill(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(t, v.Index(0))
		fill(t, v.Index(1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k)
		fill(t, e)
		v.SetMapIndex(k, e)
	case reflect.Interface:
		// An issue's variables as YAML gives them, nested.
		v.Set(reflect.ValueOf(map[string]any{"list": []any{"a", map[string]any{"deep": []any{1}}}, "other": map[any]any{1: []any{"b"}}}))
	case reflect.String:
		v.SetString("x")
	case reflect.Int:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("fill: a field of kind %s: teach fill and Clone about it", v.Kind())
	}
}

// scribble changes every map, slice element and pointee reachable from v
// in place: what a holder of a clone may do to it.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scribbleElem(v)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Time{}))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			if e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer {
				// The value itself is left, what it points at is changed.
				scribble(e)
				continue
			}
			scribble(e)
			v.SetMapIndex(it.Key(), e)
		}
		v.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
	case reflect.String:
		v.SetString("changed")
	case reflect.Int:
		v.SetInt(-1)
	case reflect.Bool:
		v.SetBool(false)
	}
}

// scribbleElem changes what a pointer or an interface holds: an
// interface's value cannot be set in place, its maps and slices can.
func scribbleElem(v reflect.Value) {
	e := v.Elem()
	if v.Kind() == reflect.Interface {
		switch e.Kind() {
		case reflect.Map, reflect.Slice:
			scribble(e)
		}
		return
	}
	scribble(e)
}

func TestCloneSharesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value func() any
		clone func(any) any
	}{
		{"issue", func() any { return &Issue{} }, func(v any) any { return v.(*Issue).Clone() }},
		{"watch file", func() any { return &WatchFile{} }, func(v any) any { return v.(*WatchFile).Clone() }},
		{"poll", func() any { return &Poll{} }, func(v any) any { return v.(*Poll).Clone() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig, want := tc.value(), tc.value()
			fill(t, reflect.ValueOf(orig).Elem())
			fill(t, reflect.ValueOf(want).Elem())
			require.Equal(t, want, orig)

			c := tc.clone(orig)
			require.Equal(t, orig, c, "the clone holds every field")
			scribble(reflect.ValueOf(c).Elem())
			require.NotEqual(t, want, c, "scribble changed the clone")
			require.Equal(t, want, orig, "changing the clone changed the original")
		})
	}
}

func TestCloneKeepsNilAndEmptyApart(t *testing.T) {
	// yaml.v3 gives an empty list for `history: []` and nil for none: a
	// clone written back must be the same file.
	for _, doc := range []string{
		"id: 1\nhistory: []\n",
		"id: 1\nlabels: [a]\nvars: {a: [1, {b: c}], n: null}\nhistory:\n  - from: a\n    to: b\n",
		"id: 1\n",
	} {
		var iss Issue
		require.NoError(t, yaml.Unmarshal([]byte(doc), &iss))
		want, err := yaml.Marshal(&iss)
		require.NoError(t, err)
		got, err := yaml.Marshal(iss.Clone())
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
		require.Equal(t, &iss, iss.Clone())
	}
	require.Nil(t, (*Issue)(nil).Clone())
	require.Nil(t, (*WatchFile)(nil).Clone())
	require.Nil(t, (*Poll)(nil).Clone())
}
