// Package breaker is the arithmetic of an issue's circuit breaker: it
// tells progress from the same failure coming back, counts failures
// without progress, and says when a person must look. It is pure: the
// caller keeps the state (issues.Breaker) and acts on the verdict.
package breaker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// Settings are the thresholds (`circuit_breaker:`, a stage's own over
// the top level's); a threshold of 0 never trips.
type Settings = stages.CircuitBreaker

// Thresholds are the circuit breaker's at node: the substage's own, else
// its stage's, else the top level's, key by key (docs/CONFIG.md,
// circuit_breaker). A threshold of the top level makes way for one the
// stage sets, as the defaults do in the top level: a stage that opens
// the breaker after 1 failure half-opens it no later.
func Thresholds(cfg *stages.Config, node *stages.Node) stages.CircuitBreaker {
	out := cfg.CircuitBreaker
	if node == nil {
		return out
	}
	var own stages.CircuitBreaker
	for _, s := range []*stages.Settings{&node.Stage.Settings, subSettings(node)} {
		if s == nil || s.CircuitBreaker == nil {
			continue
		}
		own.HalfOpenAfter = cmp.Or(s.CircuitBreaker.HalfOpenAfter, own.HalfOpenAfter)
		own.NoProgress = cmp.Or(s.CircuitBreaker.NoProgress, own.NoProgress)
		own.SameError = cmp.Or(s.CircuitBreaker.SameError, own.SameError)
	}
	switch {
	case own.HalfOpenAfter > 0 && own.NoProgress == 0:
		out.NoProgress = max(out.NoProgress, own.HalfOpenAfter)
	case own.NoProgress > 0 && own.HalfOpenAfter == 0:
		out.HalfOpenAfter = min(out.HalfOpenAfter, own.NoProgress)
	}
	out.HalfOpenAfter = cmp.Or(own.HalfOpenAfter, out.HalfOpenAfter)
	out.NoProgress = cmp.Or(own.NoProgress, out.NoProgress)
	out.SameError = cmp.Or(own.SameError, out.SameError)
	return out
}

func subSettings(node *stages.Node) *stages.Settings {
	if node.Sub == nil {
		return nil
	}
	return &node.Sub.Settings
}

// summaryChecks bounds how many failures a reason quotes, and quoteLen
// how much of each, in runes: a reason is one line a person reads.
const (
	summaryChecks = 3
	quoteLen      = 60
)

// Record counts one failure of an issue whose PR head is head, with the
// checks in failing, against the breaker b as it was. It returns the
// breaker as it is now, whether it is open (escalate), and why, in words
// a person reads.
//
// Progress is a new head on which less fails than on any head since the
// last progress (Fewer): it closes the breaker and restarts the counts.
// A failure traded for another is no progress, whatever its fingerprint.
// Any other failure is one more without progress, and one more with the
// same failure when its fingerprint is the last one's. The first failure
// is without progress: nothing was fixed yet. A pass closes the breaker
// too (Passed).
func Record(b issues.Breaker, head string, failing []Failure, s Settings) (next issues.Breaker, open bool, why string) {
	now := failureLines(failing)
	next = issues.Breaker{Fingerprint: Fingerprint(failing), Failing: checkNames(failing), Head: head,
		NoProgress: b.NoProgress + 1, SameError: 1, Fewest: b.Fewest}
	switch {
	case len(b.Fewest) == 0:
		// The first failure since the breaker closed sets the mark.
		next.Fewest = now
	case b.Head != "" && head != "" && head != b.Head && Fewer(now, b.Fewest):
		next.NoProgress, next.Fewest = 0, now
	}
	switch next.Fingerprint {
	case "":
		// Nothing says what failed: it cannot be the same failure.
		next.SameError = 0
	case b.Fingerprint:
		if next.NoProgress > 0 {
			next.SameError = b.SameError + 1
		}
	}
	next.State, why = state(next, s, failing)
	return next, next.State == issues.BreakerOpen, why
}

// Passed is the breaker after what it counted passed: closed, its counts
// and its mark of the fewest failures cleared.
func Passed() issues.Breaker { return issues.Breaker{State: issues.BreakerClosed} }

// Conflict is Record for a conflict of the PR with its base on head,
// failing as the hook said it. A conflict is no verdict on the checks (CI
// does not run on a PR that conflicts, and its results would not count):
// after a failure of the checks on another head, what failed may be fixed
// or not, nothing says yet. So it is no failure without progress: the
// counts, the mark of the fewest failures and the fingerprint stay, and
// the checks' failure coming back on the rebased head is the same failure
// again. Only Head and Failing say what failed last. A conflict after a
// conflict, or on the head already counted, is counted as any failure.
func Conflict(b issues.Breaker, head string, failing []Failure, s Settings) (next issues.Breaker, open bool, why string) {
	names := checkNames(failing)
	if b.Head == "" || head == "" || head == b.Head || slices.Equal(b.Failing, names) {
		return Record(b, head, failing, s)
	}
	b.Head, b.Failing = head, names
	return b, false, ""
}

// CIPassed is the breaker b after CI passed on head, before something
// else failed there (a conflict with a change that landed on the base):
// a pass of CI on a head b counted no failure on is a pass, progress, so
// b is closed and cleared (Passed), and what failed on head is the first
// failure since. On the head of b's last failure it is no progress: that
// head was counted, and the same conflict again on it is one more failure
// without progress, as it would be without the pass.
func CIPassed(b issues.Breaker, head string) issues.Breaker {
	if head == "" || head == b.Head {
		return b
	}
	return Passed()
}

// Fewer reports whether the failures now are fewer than those of least
// (both as failureLines gives them): the failing checks are a strict
// subset of least's, or the same checks fail with a strict subset of
// least's failure lines. It is a strict partial order, so no sequence of
// failures makes progress forever.
func Fewer(now, least []string) bool {
	nc, lc := checksOf(now), checksOf(least)
	if strictSubset(nc, lc) {
		return true
	}
	return slices.Equal(nc, lc) && strictSubset(now, least)
}

// strictSubset reports whether the sorted set a is a strict subset of the
// sorted set b.
func strictSubset(a, b []string) bool {
	if len(a) >= len(b) {
		return false
	}
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			return false
		}
	}
	return true
}

// failureLines are failing as a sorted set of "check<TAB>line", a line
// per normalised line of each check's detail (the check alone when it
// printed none).
func failureLines(failing []Failure) []string {
	var out []string
	for _, f := range failing {
		check := normalise(f.Check)
		lines := headLines(f.Detail, normalise)
		if len(lines) == 0 {
			out = append(out, check+"\t")
		}
		for _, l := range lines {
			out = append(out, check+"\t"+l)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checksOf are the checks of failure lines, sorted, each once.
func checksOf(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, "\t")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// state is where the counts of next put the breaker, and why when open.
// The same failure is named first: it says more than a count.
func state(next issues.Breaker, s Settings, failing []Failure) (string, string) {
	switch {
	case s.SameError > 0 && next.SameError >= s.SameError:
		return issues.BreakerOpen, fmt.Sprintf("the same failure %s in a row: %s", count(next.SameError, "time"), summary(failing))
	case s.NoProgress > 0 && next.NoProgress >= s.NoProgress:
		return issues.BreakerOpen, fmt.Sprintf("%s without progress (no new commit made fewer checks fail): %s",
			count(next.NoProgress, "failure"), summary(failing))
	case s.HalfOpenAfter > 0 && next.NoProgress >= s.HalfOpenAfter:
		return issues.BreakerHalfOpen, ""
	}
	return issues.BreakerClosed, ""
}

// HalfOpen is the warning of a half-open breaker b under s: where it
// stands, and what closes or opens it.
func HalfOpen(b issues.Breaker, s Settings) string {
	var opens []string
	left := s.NoProgress - b.NoProgress
	if s.NoProgress > 0 {
		opens = append(opens, more(left, "failure")+" without progress")
	}
	// The same failure again is one more without progress too: it is
	// worth a word only when it opens the breaker sooner.
	if same := s.SameError - b.SameError; s.SameError > 0 && b.SameError > 0 && (s.NoProgress == 0 || same < left) {
		opens = append(opens, "the same failure "+more(same, "time"))
	}
	text := fmt.Sprintf("circuit breaker half-open: %s without progress", count(b.NoProgress, "failure"))
	if len(opens) > 0 {
		text += "; " + strings.Join(opens, " or ") + " opens it and calls a person"
	}
	return text + "; a pass, or a new commit on which fewer checks (or lines of a check) fail, closes it"
}

// more says n more of what, at least one: "1 more failure", "2 more times".
func more(n int, what string) string {
	n = max(n, 1)
	if n == 1 {
		return "1 more " + what
	}
	return fmt.Sprintf("%d more %ss", n, what)
}

// summary quotes the failures: each check with the first line it printed
// that is not noise, bounded.
func summary(failing []Failure) string {
	if len(failing) == 0 {
		return "no failing check was named"
	}
	sorted := slices.SortedFunc(slices.Values(failing), func(a, b Failure) int { return strings.Compare(a.Check, b.Check) })
	var out []string
	for _, f := range sorted[:min(len(sorted), summaryChecks)] {
		line := truncate(plain(f.Check), quoteLen)
		if first := headLines(f.Detail, plain); len(first) > 0 {
			line += ": " + truncate(first[0], quoteLen)
		}
		out = append(out, line)
	}
	if more := len(sorted) - summaryChecks; more > 0 {
		out = append(out, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(out, "; ")
}

// Line is text as one line of at most n runes, without what only echoes
// the command that failed: what a person is told in a sentence, the full
// text being kept where it was.
func Line(text string, n int) string {
	var parts []string
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(denoise(plain(line))); line != "" {
			parts = append(parts, line)
		}
	}
	return truncate(strings.Join(parts, " | "), n)
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
