package demo

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/agenttree/agenttree/internal/textsafe"
)

// timeline prints what happens, a line per event with the time since the
// demo began; on a terminal the time is dimmed (never with NO_COLOR).
type timeline struct {
	out   io.Writer
	color bool
}

func newTimeline(out io.Writer) *timeline {
	t := &timeline{out: out}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == "" {
		t.color = true
	}
	return t
}

// say prints one event. Text from the state (a reason, a message) is made
// safe for a terminal.
func (t *timeline) say(at time.Duration, format string, args ...any) {
	stamp := fmt.Sprintf("[%6.1fs]", at.Seconds())
	if t.color {
		stamp = "\x1b[2m" + stamp + "\x1b[0m"
	}
	fmt.Fprintf(t.out, "%s %s\n", stamp, textsafe.Line(fmt.Sprintf(format, args...), 300))
}

// firstLine is a message's first line, for the timeline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
