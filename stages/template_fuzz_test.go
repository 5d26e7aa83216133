package stages_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// FuzzRender fills any template as messages and `run` commands are
// filled (Expand, Render). Each placeholder Expand reports is one that
// Placeholders lists, written where Expand says; giving each its own text
// back gives the template back; and a value is never read again, so a
// value that is itself a placeholder comes out as written.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"CI failed. Please check {{pr_url}} and fix the issues.",
		"{{failure_reason}}",
		"Review {{ issue_title }} ({{issue_id}}): {{nope}}",
		"{{a}}{{b}}{{{c}}}",
		"{{ 9x }} {{x-y}} {{}} {{",
		"",
	} {
		f.Add(seed, "{{issue_title}}")
	}
	placeholder := regexp.MustCompile(`^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$`)
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		names := stages.Placeholders(tmpl)
		var seen []string
		last := 0
		same := stages.Expand(tmpl, func(name string, start, end int) string {
			require.LessOrEqual(t, last, start)
			require.Less(t, start, end)
			require.LessOrEqual(t, end, len(tmpl))
			m := placeholder.FindStringSubmatch(tmpl[start:end])
			require.NotNil(t, m, "%q is not a placeholder", tmpl[start:end])
			require.Equal(t, name, m[1])
			seen = append(seen, name)
			last = end
			return tmpl[start:end]
		})
		require.Equal(t, tmpl, same)
		require.Equal(t, names, seen)

		vars := map[string]string{}
		for _, n := range names {
			vars[n] = value
		}
		out := stages.Render(tmpl, vars)
		// The rendered text is the template's text around the values,
		// each value whole: no value is expanded in turn.
		want := stages.Expand(tmpl, func(string, int, int) string { return "\x00" })
		parts := strings.Split(want, "\x00")
		if !strings.Contains(tmpl, "\x00") {
			require.Equal(t, strings.Join(parts, value), out)
		}
	})
}
