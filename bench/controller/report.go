package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// Targets the figures are compared against (issue 7; the events' are
// issue 20's).
const (
	targetPerPRHour = 2.0
	targetTickWall  = 2 * time.Second
	targetTickMiB   = 100.0
	// targetPaneSlack is what p95 of CI red → pane may take beyond one
	// poll interval.
	targetPaneSlack = time.Second
	// targetPaneEvents is the p95 of CI red → pane with events on.
	targetPaneEvents = 5 * time.Second
	// targetEventsPerPRHour is GitHub requests per watched PR per hour
	// while the events watch is healthy.
	targetEventsPerPRHour = 0.05
)

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mib[T int64 | uint64](bytes T) string { return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20)) }

// kinds lists requests by endpoint and kind, most first.
func kinds(counts []edge.Count) string {
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

func total(counts []edge.Count) int {
	n := 0
	for _, c := range counts {
		n += c.Requests
	}
	return n
}
