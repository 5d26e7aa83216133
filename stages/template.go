package stages

import (
	"regexp"
	"strings"
	"sync"
)

// placeholderRE is compiled on first use, not at every command's start.
var placeholderRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
})

// Placeholders lists the {{names}} used in a message template, in order.
func Placeholders(tmpl string) []string {
	var out []string
	for _, m := range placeholderRE().FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	return out
}

// Render fills a message template. Unknown names render as empty: the loader
// has already refused templates naming variables nobody provides.
func Render(tmpl string, vars map[string]string) string {
	return Expand(tmpl, func(name string, _, _ int) string { return vars[name] })
}

// Expand fills each placeholder of tmpl with value(name, start, end), where
// tmpl[start:end] is the placeholder as written: enough for a caller that
// must know where a value stands, such as in a shell command.
func Expand(tmpl string, value func(name string, start, end int) string) string {
	var b strings.Builder
	last := 0
	for _, m := range placeholderRE().FindAllStringSubmatchIndex(tmpl, -1) {
		b.WriteString(tmpl[last:m[0]])
		b.WriteString(value(tmpl[m[2]:m[3]], m[0], m[1]))
		last = m[1]
	}
	b.WriteString(tmpl[last:])
	return b.String()
}
