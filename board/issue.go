package board

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/sessions/waiton"
	"github.com/agenttree/agenttree/stages"
)

// issueView is an issue's page.
type issueView struct {
	Token, CSRF string
	Card        card
	Flow        string
	Version     int
	Branch      string
	// PR is the PR's URL, PRNumber its number (0: none).
	PR       string
	PRNumber int
	// Diff is the PR's diff stat, nil when its refs are not in the
	// repository.
	Diff *diffStat
	// Drawing is the issue's flow with its place in it.
	Drawing  drawing
	History  []historyRow
	Messages []message
	// CIFailure is the failing checks and the reason recorded; CILog the
	// tail of ci_feedback.md, what the agent was given to read.
	CIFailure, CILog string
	Conflicts        string
	Pane             string
	// PaneNote says why there is no pane to show.
	PaneNote string
	// Stages are those a person may move the issue to.
	Stages []string
	Can    actions
}

// historyRow is one entry of the issue's history.
type historyRow struct {
	At, Kind, From, To, Actor, Reason string
}

// message is one message of the issue's outbox.
type message struct {
	To, Kind, State, At, Text, Error string
	Delivered                        bool
}

// actions are the buttons the issue's page offers: those the engine may
// accept where the issue is (it still has the last word).
type actions struct {
	Approve, Reject, Resume bool
}

// paneLines is how much of the agent's pane the page shows.
const paneLines = 40

// ciLogMax bounds the CI log tail read from the issue's directory.
const ciLogMax = 16 << 10

// readIssue reads issue id's page, asking no forge.
func readIssue(ctx context.Context, e *engine.Engine, id int, now time.Time) (issueView, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return issueView{}, err
	}
	var poll *issues.Poll
	if w, err := e.Store.ReadWatch(id); err == nil {
		poll = w.Poll
	}
	agents := waiton.LookAtAgent(ctx, e, id)
	v := issueView{Card: cardOf(e.Config, iss, poll, agents, now), Flow: iss.Flow, Version: iss.Version,
		Branch: iss.Branch, PRNumber: iss.PRNumber, PR: iss.PRURL}
	v.Can = actions{Approve: v.Card.Review, Reject: v.Card.Review, Resume: iss.Escalated != nil || (iss.Breaker != nil && iss.Breaker.State != issues.BreakerClosed && iss.Breaker.State != "")}
	if flow, err := e.Config.Flow(iss.Flow); err == nil {
		v.Drawing = drawFlow(flow, e.Machine(flow), iss)
		v.Stages = flow.Paths()
	}
	for i := len(iss.History) - 1; i >= 0; i-- {
		h := iss.History[i]
		v.History = append(v.History, historyRow{At: h.At.Local().Format(time.DateTime), Kind: report.Safe(string(h.Kind)),
			From: report.Safe(h.From), To: report.Safe(h.To), Actor: report.Safe(h.Actor), Reason: report.Safe(h.Reason)})
	}
	if box, err := report.ReadInbox(e.Outbox(id), id, 20); err == nil {
		for _, m := range box.Undelivered {
			v.Messages = append(v.Messages, messageOf(m, now))
		}
		for _, m := range box.Recent {
			v.Messages = append(v.Messages, messageOf(m, now))
		}
	}
	if failed := iss.Outputs["failed_checks"]; failed != "" {
		v.CIFailure = report.Safe(failed)
	}
	if why := iss.Outputs["failure_reason"]; why != "" {
		v.CIFailure = strings.TrimPrefix(v.CIFailure+": "+report.Safe(why), ": ")
	}
	v.CILog = ciLog(e.Store.Dir(id))
	v.Conflicts = report.Safe(iss.Outputs["conflict_files"])
	v.Pane, v.PaneNote = pane(ctx, agents, id)
	return v, nil
}

// ownerOf says who acts at n, in a word.
func ownerOf(n *stages.Node) string {
	switch {
	case n.HumanReview():
		return "person"
	case n.Controller():
		return "controller"
	case n.Terminal() != stages.TerminalNone:
		return "end"
	}
	return string(n.Role())
}

func messageOf(m outbox.Message, now time.Time) message {
	out := message{To: string(m.To), Kind: m.Kind, State: string(m.State), Delivered: m.State == outbox.Sent,
		Text: strings.TrimRight(textsafe.Sanitize(m.Text), "\n"), Error: report.Safe(m.LastError)}
	if out.Delivered {
		out.At = "sent " + m.SentAt.Local().Format(time.DateTime)
	} else {
		out.At = "queued " + report.Age(now.Sub(m.Created)) + " ago"
	}
	return out
}

// ciLog is the tail of the CI feedback the agent was given, read beneath
// the issue's directory only (an agent may have swapped in a symlink).
// The agent may also have made it a FIFO, whose plain open waits for a
// writer: each page would hang holding a connection (docs/SECURITY.md,
// the board). Opened without waiting, it is read only if regular.
// syscall.O_NONBLOCK is outside the bits Windows's open looks at.
func ciLog(dir string) string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	f, err := root.OpenFile("ci_feedback.md", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	} else if fi.Size() > ciLogMax {
		if _, err := f.Seek(-ciLogMax, io.SeekEnd); err != nil {
			return ""
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, ciLogMax))
	if err != nil {
		return ""
	}
	return strings.TrimRight(textsafe.Sanitize(string(b)), "\n")
}

// pane is the last lines of the agent's pane, as text; or why there are
// none.
func pane(ctx context.Context, agents *waiton.Look, id int) (text, note string) {
	rec, alive, _ := agents.Agent(id)
	switch {
	case rec == nil:
		return "", "no agent session was started for this issue"
	case !rec.Stopped.IsZero():
		return "", "its agent was stopped by a person"
	case !alive:
		return "", "its agent's session is not running"
	}
	c := &tmux.Client{Socket: rec.Socket, Timeout: 5 * time.Second}
	out, err := c.Capture(ctx, rec.Pane, paneLines)
	if err != nil {
		return "", "the pane cannot be read: " + report.Safe(lines.First(err.Error()))
	}
	all := strings.Split(strings.TrimRight(textsafe.Sanitize(out), "\n"), "\n")
	if len(all) > paneLines {
		all = all[len(all)-paneLines:]
	}
	return strings.Join(all, "\n"), ""
}

// issueTitle is the page title of an issue.
func issueTitle(c card) string { return fmt.Sprintf("#%d %s", c.ID, c.Title) }
