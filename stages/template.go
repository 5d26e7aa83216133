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
	return Expand(tmpl, func(name, _ string) string { return vars[name] })
}

// Expand fills each placeholder of tmpl with value(name, prefix), where
// prefix is the template text before the placeholder: enough for a caller
// that must quote a value by where it stands, such as in a shell command.
func Expand(tmpl string, value func(name, prefix string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(tmpl, -1) {
		b.WriteString(tmpl[last:m[0]])
		b.WriteString(value(tmpl[m[2]:m[3]], tmpl[:m[0]]))
		last = m[1]
	}
	b.WriteString(tmpl[last:])
	return b.String()
}
