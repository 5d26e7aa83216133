package breaker

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Failure is one failing check: its name and what it printed.
type Failure struct {
	Check  string
	Detail string
}

// detailLines is how many non-empty lines of a failure's detail tell one
// failure from another: enough for the assertion that failed, before the
// stack traces and logs that vary from run to run.
const detailLines = 3

// prefixLen bounds the readable part of a fingerprint, in runes.
const prefixLen = 60

// Fingerprint identifies a set of failures, so that the same failure on
// another commit, at another time, in another work tree, is recognised:
// check names and the first lines of each detail that are not an echo of
// the command that ran (denoise), normalised (lower case; timestamps,
// durations, paths with line numbers, temporary directories, ids, hex
// and digit runs replaced), sorted. It is a short hash followed by a readable prefix
// ("3f1c0a9be2d4 test-unit: expected <n> got <n>"), or "" for no failures.
func Fingerprint(failing []Failure) string {
	if len(failing) == 0 {
		return ""
	}
	parts := make([]string, 0, len(failing))
	for _, f := range failing {
		parts = append(parts, strings.Join(append([]string{normalise(f.Check)}, headLines(f.Detail, normalise)...), "\n"))
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n\x00\n")))
	head := strings.SplitN(parts[0], "\n", 3)
	readable := head[0]
	if len(head) > 1 {
		readable += ": " + head[1]
	}
	return hex.EncodeToString(sum[:6]) + " " + truncate(readable, prefixLen)
}

// headLines returns the first detailLines lines of s that say something,
// each without its noise (denoise), passed through clean and trimmed.
func headLines(s string, clean func(string) string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(clean(denoise(line))); line != "" {
			out = append(out, line)
			if len(out) == detailLines {
				break
			}
		}
	}
	return out
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// rule replaces what matches re with repl, or with what replace returns
// for the match when it is set.
type rule struct {
	re      *regexp.Regexp
	repl    string
	replace func(string) string
}

// rules are the normalisations, in order: each runs on what the ones
// before left (timestamps before durations before digits). They are
// compiled on the first fingerprint, not at start-up.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{re: regexp.MustCompile(`\d{4}-\d\d-\d\d[t ]\d\d?:\d\d(?::\d\d(?:[.,]\d+)?)?(?:z|[+-]\d\d:?\d\d)?`), repl: "<time>"},
		{re: regexp.MustCompile(`\b\d\d?:\d\d:\d\d(?:[.,]\d+)?\b`), repl: "<time>"},
		// A path with a line number keeps its file name: the directory
		// differs between work trees, the line between commits.
		{re: regexp.MustCompile(`(?:[\w.~-]*[/\\])*([\w-]+(?:\.[\w-]+)*\.[a-z]\w*):\d+(?::\d+)?`), repl: "$1:<line>"},
		// A file in a temporary directory is the same file in every run.
		{re: regexp.MustCompile(`(?:/private)?(?:/var)?/(?:tmp|folders/[\w.-]+/[\w.-]+/t)(?:/[\w.~+-]+)+|[a-z]:\\users\\[^\\\s]+\\appdata\\local\\temp(?:\\[\w.~+-]+)+`), repl: "<tmp>"},
		{re: regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), repl: "<id>"},
		{re: regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|h|m|s))+\b`), repl: "<dur>"},
		{re: regexp.MustCompile(`\b(?:0x[0-9a-f]+|[0-9a-f]{7,})\b`), replace: func(m string) string {
			// A word of letters a-f ("defaced") is a word, not an id.
			if strings.ContainsAny(m, "0123456789") {
				return "<hex>"
			}
			return m
		}},
		{re: regexp.MustCompile(`\d+`), repl: "<n>"},
		{re: regexp.MustCompile(`\s+`), repl: " "},
	}
})

// echoes match what a log or a reason holds of the command that ran, not
// of how it failed: a shell's trace (`+ go test ./...`), a prompt
// (`$ make test`), a CI service's header of a step (`##[group]Run make`),
// and a hook's reason quoting its whole command (`command "..." failed`).
// The command is the same in every run, so it tells no failure from
// another, and quoted it runs past what a person reads in a line.
type echoes struct {
	line   *regexp.Regexp // a line that is only an echo
	quoted *regexp.Regexp // a quoted command inside a line
}

var echo = sync.OnceValue(func() echoes {
	return echoes{
		line:   regexp.MustCompile(`^\s*(?:\++ |\$ |##\[(?:group|endgroup|command)\]|\[command\])`),
		quoted: regexp.MustCompile(`\b(command|run) "(?:[^"\\]|\\.)*"`),
	}
})

// denoise is line without what only echoes the command that ran: "" for
// a line that is an echo, a quoted command replaced by its verb.
func denoise(line string) string {
	line = plain(line)
	e := echo()
	if e.line.MatchString(line) {
		return ""
	}
	return e.quoted.ReplaceAllString(line, "$1")
}

// ansi matches terminal colours and cursor movement.
var ansi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`) })

// plain is s without terminal control sequences, as a person reads it.
func plain(s string) string { return ansi().ReplaceAllString(s, "") }

// normalise makes s the same across runs of the same failure.
func normalise(s string) string {
	s = strings.ToLower(plain(s))
	for _, r := range rules() {
		if r.replace != nil {
			s = r.re.ReplaceAllStringFunc(s, r.replace)
		} else {
			s = r.re.ReplaceAllString(s, r.repl)
		}
	}
	return strings.TrimSpace(s)
}
