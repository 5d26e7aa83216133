// Package breaker is the arithmetic of an issue's circuit breaker: it
// tells progress from the same failure coming back, counts step backs
// without progress, and says when a person must look. It is pure: the
// caller keeps the state (issues.Breaker) and acts on the verdict.
package breaker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// Settings are the thresholds (`circuit_breaker:`); a threshold of 0
// never trips.
type Settings = stages.CircuitBreaker

// summaryChecks bounds how many failures a reason quotes.
const summaryChecks = 3

// Record counts one step back of an issue whose PR head is head, with the
// checks in failing, against the breaker b as it was. It returns the
// breaker as it is now, whether it is open (escalate), and why, in words
// a person reads.
//
// Progress is a new head whose failing checks differ from the last ones
// (fewer, or others): it closes the breaker and restarts the counts. Any
// other step back is one more without progress, and one more with the
// same failure when its fingerprint is the last one's. The first step
// back is without progress: nothing was fixed yet.
func Record(b issues.Breaker, head string, failing []Failure, s Settings) (next issues.Breaker, open bool, why string) {
	next = issues.Breaker{Fingerprint: Fingerprint(failing), Failing: checkNames(failing), Head: head,
		NoProgress: b.NoProgress + 1, SameError: 1}
	if progressed(b, head, failing) {
		next.NoProgress = 0
	}
	// Progress changes the failing checks, so the fingerprint too.
	switch next.Fingerprint {
	case "":
		// Nothing says what failed: it cannot be the same failure.
		next.SameError = 0
	case b.Fingerprint:
		next.SameError = b.SameError + 1
	}
	next.State, why = state(next, s, failing)
	return next, next.State == issues.BreakerOpen, why
}

// progressed reports whether head is a new commit whose failing checks
// are not the ones b saw fail last.
func progressed(b issues.Breaker, head string, failing []Failure) bool {
	if b.Head == "" || head == "" || head == b.Head {
		return false
	}
	now := make([]string, len(failing))
	for i, f := range failing {
		now[i] = f.Check
	}
	return !slices.Equal(normalisedSet(now), normalisedSet(b.Failing))
}

// state is where the counts of next put the breaker, and why when open.
// The same failure is named first: it says more than a count.
func state(next issues.Breaker, s Settings, failing []Failure) (string, string) {
	switch {
	case s.SameError > 0 && next.SameError >= s.SameError:
		return issues.BreakerOpen, fmt.Sprintf("the same failure %s: %s", count(next.SameError, "time"), summary(failing))
	case s.NoProgress > 0 && next.NoProgress >= s.NoProgress:
		return issues.BreakerOpen, fmt.Sprintf("%s without progress (no new commit changed the failing checks): %s",
			count(next.NoProgress, "step back"), summary(failing))
	case s.HalfOpenAfter > 0 && next.NoProgress >= s.HalfOpenAfter:
		return issues.BreakerHalfOpen, ""
	}
	return issues.BreakerClosed, ""
}

// summary quotes the failures: each check with the first line it printed.
func summary(failing []Failure) string {
	if len(failing) == 0 {
		return "no failing check was named"
	}
	sorted := slices.SortedFunc(slices.Values(failing), func(a, b Failure) int { return strings.Compare(a.Check, b.Check) })
	var out []string
	for _, f := range sorted[:min(len(sorted), summaryChecks)] {
		line := f.Check
		if first := headLines(f.Detail, plain); len(first) > 0 {
			line += ": " + first[0]
		}
		out = append(out, line)
	}
	if more := len(sorted) - summaryChecks; more > 0 {
		out = append(out, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(out, "; ")
}

// count says n of what: "1 time", "3 times".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// checkNames are the names of the failing checks, sorted, each once.
func checkNames(failing []Failure) []string {
	var names []string
	for _, f := range failing {
		names = append(names, f.Check)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// normalisedSet is names normalised, sorted, each once.
func normalisedSet(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = normalise(n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
