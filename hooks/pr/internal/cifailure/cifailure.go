// Package cifailure reads what the failed checks of a finished CI run
// say: the tails of their logs, whether each failed for its environment
// rather than its code (docs/CONFIG.md, "CI failure kinds"), and the
// feedback the agent reads. It is the diagnosis half of the CI hooks,
// kept apart from their polling so that what counts as an environment's
// failure is read, and tested, in one place.
package cifailure

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// Run is what the failed checks of a finished CI run say: their logs,
// read once, and for each check why it failed for its environment rather
// than its code ("" where it did not).
type Run struct {
	Checks []forge.Check
	logs   []checkLog
	env    []string
	// lines is how many lines of each log were read.
	lines int
}

// Read reads the last lines of the logs of the failed checks and tells
// which failed for their environment (docs/CONFIG.md, "CI failure kinds").
func Read(ctx context.Context, f forge.Forge, failed []forge.Check, lines int) Run {
	run := Run{Checks: failed, logs: make([]checkLog, len(failed)), env: make([]string, len(failed)), lines: lines}
	for i, ch := range failed {
		run.logs[i] = readLog(ctx, f, ch, lines)
		run.env[i] = environmentFailure(ch, run.logs[i].text)
	}
	return run
}

// NoVerdict reports whether no failed check said anything of the code:
// each was cancelled or timed out on the CI service, or failed for its
// environment.
func (r Run) NoVerdict() bool {
	for i, ch := range r.Checks {
		if ch.State != forge.CheckCancelled && ch.State != forge.CheckTimedOut && r.env[i] == "" {
			return false
		}
	}
	return true
}

// Environment reports whether a check failed for its environment.
func (r Run) Environment() bool {
	for _, why := range r.env {
		if why != "" {
			return true
		}
	}
	return false
}

// EnvironmentReasons say, for each check that failed for its
// environment, its name and why.
func (r Run) EnvironmentReasons() []string {
	var why []string
	for i, ch := range r.Checks {
		if r.env[i] != "" {
			why = append(why, fmt.Sprintf("%s: %s", textsafe.Name(ch.Name), r.env[i]))
		}
	}
	return why
}

// environmentFailure says why check ch failed for its environment rather
// than its code: what the forge says of it, else a line of its log that
// only a failing environment writes; "" when neither does. The phrases
// are matched case-insensitively, and a refused download needs a URL, a
// word of downloading and the status on one line, so that a test that
// checks a 403 does not read as one.
func environmentFailure(ch forge.Check, log string) string {
	if ch.State == forge.CheckCancelled || ch.State == forge.CheckTimedOut {
		return ""
	}
	if ch.Environment != "" {
		return ch.Environment
	}
	for _, line := range strings.Split(log, "\n") {
		low := strings.ToLower(line)
		for _, sig := range envSignatures {
			if strings.Contains(low, sig.text) {
				return fmt.Sprintf("%s (the log says %q)", sig.why, clipLine(line))
			}
		}
		if downloadRefused(low) {
			return fmt.Sprintf("a download was refused (the log says %q)", clipLine(line))
		}
	}
	return ""
}

// envSignatures are what a CI log says when its environment, not the code,
// failed. Documented in docs/CONFIG.md ("CI failure kinds").
var envSignatures = []struct{ text, why string }{
	{"the runner has received a shutdown signal", "its runner was shut down"},
	{"lost communication with the server", "its runner lost contact with the CI service"},
	{"no space left on device", "its machine ran out of disk"},
	{"could not resolve host", "a host name could not be resolved"},
	{"temporary failure in name resolution", "a host name could not be resolved"},
}

// refusedStatuses are the HTTP statuses of a download the server refused
// or could not serve: forbidden, rate limited, a server error.
var refusedStatuses = []string{"403", "429", "500", "502", "503", "504"}

// downloadWords are what a line says when it is about getting a
// dependency, a module or an image from the network. A bare "GET URL" is
// not one: a test of an HTTP server logs it.
var downloadWords = []string{"download", "fetch", "install", "registry", "proxy", "pull", "retriev"}

// downloadRefused reports whether a log line (lower-cased) says a download
// from a URL was answered with a refusing status: a URL, a word of
// downloading and the status as a word of its own, all on the line.
func downloadRefused(low string) bool {
	if !strings.Contains(low, "http://") && !strings.Contains(low, "https://") {
		return false
	}
	downloading := false
	for _, w := range downloadWords {
		if strings.Contains(low, w) {
			downloading = true
			break
		}
	}
	if !downloading {
		return false
	}
	// The status is looked for outside the URLs, whose paths hold numbers
	// of their own (pkg-1.0.500.tgz).
	for _, field := range strings.Fields(low) {
		if strings.Contains(field, "://") {
			continue
		}
		for _, word := range strings.FieldsFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if slices.Contains(refusedStatuses, word) {
				return true
			}
		}
	}
	return false
}

// clipLine is a log line short enough to quote in a reason.
func clipLine(line string) string {
	return textsafe.Clip(strings.TrimSpace(line), 121) // 120 runes and "…"
}

// checkLog is the tail of a failed check's log, or why it could not be
// fetched.
type checkLog struct {
	text string
	err  error
}

func readLog(ctx context.Context, f forge.Forge, ch forge.Check, lines int) checkLog {
	text, err := f.Log(ctx, ch, lines)
	return checkLog{text: text, err: err}
}

// Details says, a line per failed check, how it failed: its name and
// the first lines of its log that report an error. The circuit breaker
// tells one failure from another by these, not by the commit.
func (r Run) Details() string {
	var b strings.Builder
	for i, ch := range r.Checks {
		fmt.Fprintf(&b, "%s\t%s\n", ch.Name, strings.Join(errorLines(r.logs[i].text, 3), " | "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// errorLines are the first n lines of log that look like a failure's
// report (FAIL, error, panic, expected), else its last n non-empty ones.
func errorLines(log string, n int) []string {
	var hits, all []string
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		all = append(all, l)
		low := strings.ToLower(l)
		if len(hits) < n && (strings.Contains(low, "fail") || strings.Contains(low, "error") || strings.Contains(low, "panic") || strings.Contains(low, "expected")) {
			hits = append(hits, l)
		}
	}
	if len(hits) > 0 {
		return hits
	}
	return all[max(0, len(all)-n):]
}

// Feedback is ci_feedback.md, what the agent reads of the failure of pr's
// head: the failed checks, with links, and the tails of their logs.
func (r Run) Feedback(pr *forge.PR) string {
	failed, logs := r.Checks, r.logs
	var b strings.Builder
	fmt.Fprintf(&b, "# CI failed\n\nPR #%d (%s), commit %s.\n\n## Failing checks\n\n", pr.Number, pr.URL, pr.HeadSHA)
	for _, ch := range failed {
		link := ch.URL
		if link == "" {
			link = "no link"
		}
		fmt.Fprintf(&b, "- **%s**: %s — %s\n", ch.Name, ch.State, link)
	}
	for i, ch := range failed {
		text := logs[i].text
		if err := logs[i].err; err != nil {
			fmt.Fprintf(&b, "\n## %s\n\nThe log could not be fetched: %v\n", ch.Name, err)
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&b, "\n## %s (last %d lines of the log)\n\n```text\n%s\n```\n", ch.Name, r.lines, strings.TrimRight(text, "\n"))
	}
	b.WriteString("\nFix the failures and commit, then run `agenttree next` (it pushes your branch).\n")
	return b.String()
}
