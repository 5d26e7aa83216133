// Package phrase words the reasons of the built-in hooks' failures the
// same way everywhere: counts, quoted lists, and the hint that ends a
// failure an agent fixes by editing files.
package phrase

import (
	"fmt"
	"strings"
)

// NextHint ends the reasons of failures an agent fixes by editing files.
const NextHint = "then run `agenttree next` again"

// Plural is "1 item" or "3 items".
func Plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, Pick(n, one, many))
}

// Pick is one when n is 1, else many.
func Pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Quoted lists strings in Go quotes: "a", "b".
func Quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
