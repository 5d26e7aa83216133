package stages

import (
	"regexp"
	"strings"
)

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// Placeholders lists the {{names}} used in a message template, in order.
func Placeholders(tmpl string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	return out
}

// Render fills a message template. Unknown names render as empty: the loader
// has already refused templates naming variables nobody provides.
func Render(tmpl string, vars map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := strings.TrimSpace(m[2 : len(m)-2])
		return vars[name]
	})
}
