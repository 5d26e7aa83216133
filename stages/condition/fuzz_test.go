package condition_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages/condition"
)

// FuzzCompile compiles any text as a condition (`condition:`, `when:`),
// in either spelling, and evaluates what compiles. A syntax error is an
// *Error whose offset lies inside the text; a condition never panics, and
// evaluates alike with a variable left out and with it false (Eval's
// promise: an issue that never set a variable reads it as false).
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		"needs_ui_review",
		"{{ needs_ui_review }}",
		"{{ wants_second_opinion }} and not {{ hotfix }}",
		"not {{ a or b }}",
		"wants_rework",
		"rework",
		"a == 'x' || b > 2",
		"coverage >= 80 and lang in ['go', 'rust']",
		"len(title) > 3",
		"{{}}",
		"{{ a }",
		"a and",
		"(a",
		"'unterminated",
		"1 / 0",
		"a.b.c",
		"a[0]",
	} {
		f.Add(seed)
	}
	vars := []map[string]any{
		nil,
		{"needs_ui_review": true, "hotfix": false, "coverage": 85, "title": "Add login", "lang": "go"},
		{"a": "", "b": 0, "rework": "yes", "wants_rework": []any{1}},
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := condition.Compile(src)
		if err != nil {
			var ce *condition.Error
			if errors.As(err, &ce) {
				require.Equal(t, src, ce.Src)
				require.GreaterOrEqual(t, ce.Offset, -1)
				require.LessOrEqual(t, ce.Offset, len(src), "offset past the end of %q", src)
			}
			return
		}
		for _, v := range vars {
			got, err := p.Eval(v)
			if err != nil {
				require.False(t, got, "an error is false")
			}
			// A name left out reads as false.
			withFalse := map[string]any{}
			for k, x := range v {
				withFalse[k] = x
			}
			for _, name := range p.Names() {
				if _, ok := withFalse[name]; !ok {
					withFalse[name] = false
				}
			}
			again, err2 := p.Eval(withFalse)
			require.Equal(t, got, again, "%q with %v", src, v)
			require.Equal(t, err == nil, err2 == nil, "%q with %v: %v / %v", src, v, err, err2)
		}
	})
}
