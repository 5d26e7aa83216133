package cmdutil

import (
	"time"

	"github.com/agenttree/agenttree/engine/report"
)

// SafeTitle is an issue's title as people's output shows it: one line,
// nothing a terminal acts on, no longer than a new title may be. Titles
// are checked when an issue is created; older ones, and issue.yaml files
// edited by hand, were not. --json output keeps the title as stored.
func SafeTitle(title string) string { return report.SafeTitle(title) }

// SafeText is any other stored text, as SafeTitle shows a title: what an
// agent, a hook or a hand edit put in the files.
func SafeText(s string) string { return report.Safe(s) }

// Age is a duration for people: whole seconds, whole minutes past an hour.
func Age(d time.Duration) string { return report.Age(d) }
