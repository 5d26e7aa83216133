package sessions

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/sessions/records"
)

// ExitKind says why an agent's process ended, as far as its exit status
// and its last output tell.
type ExitKind = records.ExitKind

const (
	// ExitTimeout: it was killed for taking too long (status 124, as
	// timeout(1) exits, or 137, SIGKILL).
	ExitTimeout ExitKind = "timeout"
	// ExitAuth: its credentials were refused. Starting it again cannot
	// help; a person must fix them.
	ExitAuth ExitKind = "authentication"
	// ExitRateLimit: its provider refused more requests for now.
	ExitRateLimit ExitKind = "rate_limit"
	// ExitOther: anything else (a crash, a normal exit).
	ExitOther ExitKind = "other"
	// ExitGone: its session is gone altogether (a reboot, a killed tmux
	// server or session), so neither status nor output is known.
	ExitGone ExitKind = "gone"
)

// outputSigns are the words in an agent's last output that tell an
// authentication failure or a rate limit, matched whole (not inside a
// longer word or number) and ignoring case. Authentication is looked
// for first: it is the one never retried.
var outputSigns = []struct {
	kind  ExitKind
	words []string
}{
	{ExitAuth, []string{"authentication", "unauthorized", "unauthorised", "401", "invalid api key", "invalid_api_key",
		"api key not valid", "not logged in", "please log in", "login required"}},
	{ExitRateLimit, []string{"rate limit", "rate limited", "rate-limit", "rate_limit", "429", "quota", "too many requests", "overloaded"}},
}

// outputTail is how many of the last lines of output Classify reads: the
// agent's last words, not what it printed while it worked (an agent
// working on a web server prints 401 and 429 on its way).
const outputTail = 15

// Classify says why an agent ended from its exit status and the output
// its pane shows.
func Classify(status int, output string) ExitKind {
	if status == 124 || status == 137 {
		return ExitTimeout
	}
	said := agentLines(output)
	tail := strings.ToLower(strings.Join(said[max(0, len(said)-outputTail):], "\n"))
	for _, sign := range outputSigns {
		for _, w := range sign.words {
			if containsWord(tail, w) {
				return sign.kind
			}
		}
	}
	return ExitOther
}

// agentLines are the lines of a pane's output the agent wrote: not the
// blank ones (a pane is as tall as its window) nor the note tmux writes
// at the bottom of a dead pane.
func agentLines(output string) []string {
	var said []string
	for _, line := range lines.Last(output, 0) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "Pane is dead") {
			said = append(said, line)
		}
	}
	return said
}

// containsWord reports whether w occurs in s with no letter or digit
// right before or after it.
func containsWord(s, w string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(w)
		if !wordRune(lastRune(s[:start])) && !wordRune(firstRune(s[end:])) {
			return true
		}
		from = start + 1
	}
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}
