package engine

import (
	"cmp"
	"fmt"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
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

// entryCursor is where an entry's hooks stand: done of them passed, on
// the PR's head on ("" before there is a PR).
type entryCursor struct {
	done int
	on   string
	// restarted says the entry already started again in this call: a
	// head that moves again waits for the next call, so a hook that moves
	// it every time cannot hold the issue's lock in a loop.
	restarted bool
}

// cursorOf is where the entry of to stands on iss: from its record, with
// the hooks done started again when the issue's head is not the one they
// passed on. A record without a head (written before heads were kept)
// passed on the issue's.
func cursorOf(iss *issues.Issue, to *stages.Node, n int) (entryCursor, string) {
	c := entryCursor{on: iss.HeadSHA}
	p := iss.EntryPending
	if p == nil || p.Stage != to.Path {
		return c, ""
	}
	c.done, c.on = min(p.Done, n), cmp.Or(p.Head, iss.HeadSHA)
	return c, c.moved(iss.HeadSHA, to)
}

// moved starts the entry again when the hooks done passed on a head other
// than now, and says so; "" when they did not.
func (c *entryCursor) moved(now string, to *stages.Node) string {
	if c.done == 0 || c.on == "" || now == "" || now == c.on {
		c.on = cmp.Or(now, c.on)
		return ""
	}
	why := fmt.Sprintf("the PR's head moved from %s to %s: %s's entry runs again from its first hook, on the new head",
		gitx.ShortSHA(c.on), gitx.ShortSHA(now), to.Path)
	c.done, c.on = 0, now
	return why
}

// steps runs the entry hooks list of to from cur on, into a, until one
// does not pass or the issue leaves the stage; a hook that moves the head
// under the hooks done before it starts them again (once in a call; the
// next call goes on after a second move).
func (a *arrival) steps(t *transition, to *stages.Node, list []*stages.HookEntry, seq *sequence, cur *entryCursor) {
	for cur.done < len(list) {
		h := list[cur.done]
		passed := a.step(t, to, h, seq)
		if a.next != nil {
			return
		}
		if why := cur.moved(cmp.Or(seq.outputs["head_sha"], seq.snap.HeadSHA), to); why != "" {
			why = h.Label() + ": " + why
			seq.said.hook([]string{why}, nil)
			if passed && !cur.restarted {
				cur.restarted = true
				continue
			}
			if passed {
				o := hooks.Pending(t.e.Config.CIPolling.PollInterval, why)
				a.waiting = &o
			}
			return
		}
		if !passed {
			return
		}
		cur.done++
	}
}
