package prhead

import (
	"cmp"
	"fmt"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// A stage's entry hooks hold results tied to the PR's head: the PR was
// pushed at it, CI passed on it, it merged cleanly. A hook that moves the
// head (check_conflicts' or rebase's push; a push the hook found) leaves
// the hooks before it passed on code that is no longer the PR's, so the
// entry starts again from its first hook on the new head
// (docs/ARCHITECTURE.md §5). Every entry hook may run again (a crash
// leaves the one running to run again too), so starting over is safe.

// Cursor is where an entry's hooks stand: Done of them passed, on the
// PR's head On ("" before there is a PR).
type Cursor struct {
	Done int
	On   string
	// Restarted says the entry already started again in this call: a
	// head that moves again waits for the next call, so a hook that moves
	// it every time cannot hold the issue's lock in a loop.
	Restarted bool
}

// CursorOf is where the entry of to, n hooks long, stands on iss: from
// its record, with the hooks done started again when the issue's head is
// not the one they passed on (and why, else ""). A record without a head
// (written before heads were kept) passed on the issue's.
func CursorOf(iss *issues.Issue, to *stages.Node, n int) (Cursor, string) {
	c := Cursor{On: iss.HeadSHA}
	p := iss.EntryPending
	if p == nil || p.Stage != to.Path {
		return c, ""
	}
	c.Done, c.On = min(p.Done, n), cmp.Or(p.Head, iss.HeadSHA)
	return c, c.Moved(iss.HeadSHA, to)
}

// Moved starts the entry of to again when the hooks done passed on a head
// other than now, and says so; "" when they did not.
func (c *Cursor) Moved(now string, to *stages.Node) string {
	if c.Done == 0 || c.On == "" || now == "" || now == c.On {
		c.On = cmp.Or(now, c.On)
		return ""
	}
	why := fmt.Sprintf("the PR's head moved from %s to %s: %s's entry runs again from its first hook, on the new head",
		gitx.ShortSHA(c.On), gitx.ShortSHA(now), to.Path)
	c.Done, c.On = 0, now
	return why
}
