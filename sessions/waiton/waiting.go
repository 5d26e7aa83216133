// Package waiton says what an issue waits on, and who moves it on, from
// what its files hold (issue.yaml, watch.yaml, the agents' session
// records) and, for agents, whether their tmux sessions live: the words
// `status` and `watch` print, and the commands that move the issue on.
package waiton

import (
	"fmt"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/stages"
)

// waiting is what an issue waits on, from what issue.yaml and watch.yaml
// hold (the forge is not asked): who acts, in words, since when, and the
// commands that move it on.
type Waiting struct {
	Who Waiter
	// role is the agent's, when who is waiterAgent.
	Role stages.Role
	What string
	// since starts the clock the text shows; zero: none.
	Since time.Time
	// nextLook is when the controller means to look at the issue again;
	// zero when it does not poll it.
	NextLook time.Time
	Run      []string
}

// Waiter is who an issue waits on.
type Waiter string

const (
	WaiterPerson     Waiter = "person"
	WaiterAgent      Waiter = "agent"
	WaiterController Waiter = "controller"
	// WaiterNobody: the issue is done; nothing moves it on.
	WaiterNobody Waiter = "nobody"
)

// overdueAfter is how late the controller's next look may be before the
// status says it may not be running: a tick is seconds, a poll minutes.
const overdueAfter = 2 * time.Minute

// Text is w in words at now: what, for how long, and whether the
// controller is late. The clock is not part of What: `watch` compares
// what, and a clock changes every second.
func (w Waiting) Text(now time.Time) string {
	s := w.What
	if !w.Since.IsZero() {
		s += ", for " + report.Age(now.Sub(w.Since))
	}
	if late := now.Sub(w.NextLook); !w.NextLook.IsZero() && late > overdueAfter {
		s += fmt.Sprintf("; the controller is %s late (is `agenttree controller` running?)", report.Age(late))
	}
	return s
}

// On is what iss waits on. poll is its watch.yaml's polling state
// (nil: none); agents what is known of the agents' sessions.
func On(cfg *stages.Config, iss *issues.Issue, poll *issues.Poll, agents *Look) Waiting {
	if poll != nil && poll.PR != iss.PRNumber {
		poll = nil // the state of a PR the issue no longer has
	}
	node, known := cfg.Node(iss.Stage)
	switch {
	case iss.Escalated != nil:
		return Waiting{Who: WaiterPerson, What: "escalated: " + lines.First(iss.Escalated.Reason), Since: iss.Escalated.At, Run: ResolveCommands(iss.ID)}
	case !known:
		return Waiting{Who: WaiterPerson, What: fmt.Sprintf("a person: stage %s is not in the config", iss.Stage),
			Run: []string{fmt.Sprintf("agenttree move %d STAGE --reason TEXT", iss.ID)}}
	case node.Controller() || iss.EntryPending != nil:
		return controllerWaiting(iss, poll)
	case node.Terminal() == stages.TerminalCompletion:
		return Waiting{Who: WaiterNobody, What: "done"}
	case node.Terminal() == stages.TerminalAbandon:
		return Waiting{Who: WaiterNobody, What: "abandoned"}
	case node.HumanReview():
		return Waiting{Who: WaiterPerson, What: "waiting for human review", Since: Entered(iss),
			Run: []string{fmt.Sprintf("agenttree approve %d", iss.ID), fmt.Sprintf("agenttree reject %d --message TEXT", iss.ID)}}
	case node.ParkingLot():
		return Waiting{Who: WaiterPerson, What: "parked until a person starts it", Run: []string{fmt.Sprintf("agenttree next -i %d", iss.ID)}}
	case atFlowEnd(cfg, iss, node):
		return flowEndWaiting(iss)
	case node.Role() == stages.RoleHuman:
		return Waiting{Who: WaiterPerson, What: "a person working", Since: Entered(iss), Run: []string{fmt.Sprintf("agenttree next -i %d", iss.ID)}}
	}
	return agentStageWaiting(cfg, iss, node.Role(), poll, agents)
}

// controllerWaiting is what an issue the controller works on waits on: a
// controller stage, or entry work that has not finished (at any stage).
func controllerWaiting(iss *issues.Issue, poll *issues.Poll) Waiting {
	w := Waiting{Who: WaiterController, Run: []string{"agenttree controller", fmt.Sprintf("agenttree next -i %d", iss.ID)}}
	p := iss.EntryPending
	switch {
	case p != nil && len(p.Failures) > 0:
		w.What = fmt.Sprintf("controller: the entry work of %s failed and is retried: %s", p.Stage, lines.First(p.Failures[0]))
	case resumedSince(iss, poll):
		// What the last poll saw is from before the person said to try
		// again: the controller looks at once, not at the grown interval.
		at := iss.History[len(iss.History)-1].At
		w.What, w.Since = "controller: resumed by a person; it looks again at its next pass", at
		w.NextLook = at
		return w
	case staleSince(iss, poll):
		// The last poll was before the issue's last move: what it said
		// (checks running, "moved …") is about an earlier visit.
		h := iss.History[len(iss.History)-1]
		w.What = fmt.Sprintf("controller: it looks at %s at its next pass (%s)", iss.Stage, lines.First(HistoryText(h)))
		w.Since, w.NextLook = h.At, h.At
		return w
	case poll != nil && poll.Checks != nil && poll.Checks.Total > 0 && poll.Checks.Pending == 0 && p != nil &&
		(poll.Head == "" || iss.HeadSHA == "" || poll.Head == iss.HeadSHA):
		// The PR's checks are done on the issue's head, whatever the hook
		// said a moment before it read them: the next pass acts on them.
		// Checks of a head the issue has left (a rebase since) are not.
		c := poll.Checks
		w.What = fmt.Sprintf("controller: CI done (%d passed, %d failed); it acts on it at its next pass", c.Passing, c.Failing)
		w.Since = poll.PushedAt
	case poll != nil && poll.Checks != nil && poll.Checks.Pending > 0:
		c := poll.Checks
		switch {
		case c.Queued == c.Pending:
			// Its time limit has not started: say so, or a long wait
			// reads as a run about to time out.
			w.What = fmt.Sprintf("controller: CI queued, %d/%d checks waiting to start", c.Queued, c.Total)
		case c.Queued > 0:
			w.What = fmt.Sprintf("controller: CI running, %d/%d checks done, %d queued", c.Total-c.Pending, c.Total, c.Queued)
		default:
			w.What = fmt.Sprintf("controller: CI running, %d/%d checks done", c.Total-c.Pending, c.Total)
		}
		w.Since = poll.PushedAt
	case poll != nil && poll.Status != "":
		w.What = "controller: " + lines.First(poll.Status)
		w.Since = poll.PushedAt // how long it has been at it on this head
		if w.Since.IsZero() {
			w.Since = poll.Started
		}
	case p != nil && p.Done > 0:
		w.What = fmt.Sprintf("controller: the entry work of %s is under way (%d hook(s) passed)", p.Stage, p.Done)
	case p != nil:
		w.What = fmt.Sprintf("controller: the entry work of %s has not run yet", p.Stage)
	default:
		w.What = "controller: not looked at yet"
	}
	if poll != nil {
		w.NextLook = poll.NextAt
	}
	return w
}

// staleSince reports whether the controller last polled issue iss before
// its last move (other than a resume, which resumedSince tells).
func staleSince(iss *issues.Issue, poll *issues.Poll) bool {
	h, ok := movedSincePoll(iss, poll)
	return ok && h.Kind != stages.MoveResume
}

// resumedSince reports whether a person resumed iss after the
// controller's last poll of it.
func resumedSince(iss *issues.Issue, poll *issues.Poll) bool {
	h, ok := movedSincePoll(iss, poll)
	return ok && h.Kind == stages.MoveResume
}

// movedSincePoll is iss's last history entry, ok when it came after the
// controller's last poll of it.
func movedSincePoll(iss *issues.Issue, poll *issues.Poll) (h issues.HistoryEntry, ok bool) {
	n := len(iss.History)
	if poll == nil || poll.PolledAt.IsZero() || n == 0 {
		return h, false
	}
	h = iss.History[n-1]
	return h, h.At.After(poll.PolledAt)
}

// agentWaiting is what an issue at an agent's stage waits on, saying why
// when the work came back to the agent.
func agentWaiting(iss *issues.Issue, role stages.Role, poll *issues.Poll) Waiting {
	w := Waiting{Who: WaiterAgent, Role: role, What: fmt.Sprintf("agent working (%s)", role), Since: Entered(iss), Run: []string{"agenttree next"}}
	if n := len(iss.History); n > 0 && iss.History[n-1].To == iss.Stage {
		switch h := iss.History[n-1]; h.Kind {
		case stages.MoveStepBack:
			w.What += " after a step back: " + lines.First(h.Reason)
		case stages.MoveReject:
			w.What += " after a reviewer sent it back: " + lines.First(h.Reason)
		}
	}
	if poll != nil && iss.PRNumber > 0 {
		w.NextLook = poll.NextAt // the controller watches its PR
	}
	return w
}

// entered is when iss came to its stage: the first of the latest history
// entries that leave it there (an escalation and a resume do not move it).
func Entered(iss *issues.Issue) time.Time {
	at := iss.Created
	for i := len(iss.History) - 1; i >= 0 && iss.History[i].To == iss.Stage; i-- {
		at = iss.History[i].At
	}
	return at
}
