package main

import (
	"fmt"
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

func total(counts []edge.Count) int {
	n := 0
	for _, c := range counts {
		n += c.Requests
	}
	return n
}
