package pr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// failedRun is what the failed checks of a finished CI run say: their
// logs, read once, and for each check why it failed for its environment
// rather than its code ("" where it did not).
type failedRun struct {
	checks []forge.Check
	logs   []checkLog
	env    []string
}

// readFailedRun reads the logs of the failed checks and tells which failed
// for their environment (docs/CONFIG.md, "CI failure kinds").
func readFailedRun(ctx context.Context, f forge.Forge, failed []forge.Check) failedRun {
	run := failedRun{checks: failed, logs: make([]checkLog, len(failed)), env: make([]string, len(failed))}
	for i, ch := range failed {
		run.logs[i] = readLog(ctx, f, ch)
		run.env[i] = environmentFailure(ch, run.logs[i].text)
	}
	return run
}

// noVerdict reports whether no failed check said anything of the code:
// each was cancelled or timed out on the CI service, or failed for its
// environment.
func (r failedRun) noVerdict() bool {
	for i, ch := range r.checks {
		if ch.State != forge.CheckCancelled && ch.State != forge.CheckTimedOut && r.env[i] == "" {
			return false
		}
	}
	return true
}

// environment reports whether a check failed for its environment.
func (r failedRun) environment() bool {
	for _, why := range r.env {
		if why != "" {
			return true
		}
	}
	return false
}

// noVerdict is CI whose failed checks gave no verdict on the code, run
// again as far as allowed: ci_environment when one of them failed for its
// environment, else ci_cancelled. Neither has a feedback file, and
// neither spends the budget of ci_failed.
func (p *ciPoll) noVerdict(run failedRun) hooks.Outcome {
	if !run.environment() {
		return p.unfinished(run.checks)
	}
	var why []string
	for i, ch := range run.checks {
		if run.env[i] != "" {
			why = append(why, fmt.Sprintf("%s: %s", textsafe.Name(ch.Name), run.env[i]))
		}
	}
	o := hooks.FailAs(hooks.ClassCIEnvironment, "CI on %s failed for its environment, not the code (ci_environment), after it was run again: %s; "+
		"nothing in the code to fix: the CI service, its runners or the network need a person", p.short(), strings.Join(why, "; "))
	p.watch.restart(p.now)
	return withOutputs(o, map[string]string{"failure_reason": o.Reason, "failed_checks": "", "failure_details": ""})
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
