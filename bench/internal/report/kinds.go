package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// Kinds lists requests by endpoint and kind, most first.
func Kinds(counts []edge.Count) string {
	counts = slices.Clone(counts)
	slices.SortStableFunc(counts, func(a, b edge.Count) int { return b.Requests - a.Requests })
	var parts []string
	for _, c := range counts {
		name := strings.TrimSpace(c.Endpoint + " " + c.Kind)
		if c.NotModified > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%d answered 304)", name, c.Requests, c.NotModified))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, c.Requests))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
