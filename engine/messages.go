package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/outbox"
	"github.com/agenttree/agenttree/stages"
)

// Outbox is issue id's queue of messages.
func (e *Engine) Outbox(id int) *outbox.Box {
	return outbox.Open(filepath.Join(e.Store.Dir(id), "outbox"))
}

// queue puts messages hooks asked to send (send_message) in the issue's
// outbox, each keyed by its text and what it is about (scope: the head a
// watch acted on, else the issue's head), so a message asked for again —
// a pass run again after a crash, a failure policy on every pass — is
// queued once, and a different one is never mistaken for it.
func (e *Engine) queue(ctx context.Context, iss *issues.Issue, scope string, texts []string) error {
	box := e.Outbox(iss.ID)
	if scope == "" {
		scope = iss.Stage + "@" + iss.HeadSHA
	}
	for _, text := range texts {
		sum := sha256.Sum256([]byte(scope + "\x00" + text))
		key := "send-" + hex.EncodeToString(sum[:8])
		if _, err := box.Put(ctx, outbox.Message{Key: key, To: outbox.ToAgent, Kind: "message", Text: text}); err != nil {
			return err
		}
	}
	return nil
}

// Messages are what the issue's state says people and its agent must be
// told: what its latest history entry says (entryMessages), a human review
// waiting and entry work a person must see to (to the manager). The
// engine queues each entry's messages as it writes the entry; the
// controller puts these in the outbox again on every pass, and a key
// already there adds nothing, so a message is queued exactly once
// whatever crashes.
func (e *Engine) Messages(iss *issues.Issue) []outbox.Message {
	n := len(iss.History)
	if n == 0 {
		return nil
	}
	out := e.entryMessages(iss, n-1)
	last, key := iss.History[n-1], "h"+strconv.Itoa(n-1)
	if node, ok := e.Config.Node(iss.Stage); ok && node.HumanReview() && iss.Escalated == nil && last.To == iss.Stage && last.Kind != stages.MoveEscalate {
		out = append(out, outbox.Message{Key: key + "-review", To: outbox.ToManager, Kind: "review",
			Text: fmt.Sprintf("issue %d (%s) waits for your review at %s: `agenttree approve %d`, or `agenttree reject %d --message TEXT`",
				iss.ID, iss.Title, iss.Stage, iss.ID, iss.ID)})
	}
	if p := iss.EntryPending; p != nil && len(p.Failures) > 0 && iss.Escalated == nil {
		out = append(out, outbox.Message{Key: fmt.Sprintf("%s-entry-%d", key, p.Done), To: outbox.ToManager, Kind: "entry",
			Text: fmt.Sprintf("issue %d (%s) is at %s, but its entry work did not finish: %s", iss.ID, iss.Title, p.Stage, strings.Join(p.Failures, "; "))})
	}
	return out
}

// entryMessages are what history entry i of iss tells the agent and
// people, each keyed by the entry: work sent back (a step back, a
// rejection), an escalation (people, and the agent, told to stop), a
// person's move of the issue.
func (e *Engine) entryMessages(iss *issues.Issue, i int) []outbox.Message {
	h, key := iss.History[i], "h"+strconv.Itoa(i)
	agent := func(text string) outbox.Message {
		return outbox.Message{Key: key, To: outbox.ToAgent, Kind: string(h.Kind), Text: text}
	}
	switch h.Kind {
	case stages.MoveStepBack, stages.MoveReject:
		return []outbox.Message{agent(e.backText(iss, h))}
	case stages.MoveEscalate:
		return []outbox.Message{
			{Key: key, To: outbox.ToManager, Kind: "escalation",
				Text: fmt.Sprintf("issue %d (%s) needs a person at %s: %s; resolve it: `agenttree resume %d` (try again), `agenttree skip %d --reason TEXT`, `agenttree abort %d`, or `agenttree move %d STAGE --reason TEXT`",
					iss.ID, iss.Title, h.To, h.Reason, iss.ID, iss.ID, iss.ID, iss.ID)},
			{Key: key + "-agent", To: outbox.ToAgent, Kind: "escalation",
				Text: fmt.Sprintf("issue %d is stopped for a person at %s: %s. Do not work on it until you are told it goes on.", iss.ID, h.To, h.Reason)},
		}
	case stages.MoveAbort, stages.MoveSkip, stages.MoveManual:
		text := fmt.Sprintf("issue %d was moved %s → %s by the %s (%s): %s.", iss.ID, h.From, h.To, h.Actor, h.Kind, h.Reason)
		if node, ok := e.Config.Node(h.To); ok && node.Terminal() != stages.TerminalNone {
			text += " It is finished: stop working on it."
		} else if ok {
			text += "\n" + e.instructions(node, iss)
		}
		return []outbox.Message{agent(text)}
	}
	return nil
}

// backText is what the agent is told when its work is sent back: why,
// where to read more (the document the failing hook wrote, the
// conflicting files), what to do about that kind of failure, and to run
// `agenttree next`.
func (e *Engine) backText(iss *issues.Issue, h issues.HistoryEntry) string {
	var b strings.Builder
	verb := "stepped back"
	if h.Kind == stages.MoveReject {
		verb = "sent back by a reviewer"
	}
	fmt.Fprintf(&b, "issue %d was %s %s → %s: %s", iss.ID, verb, h.From, h.To, strings.TrimSpace(h.Reason))
	if h.Kind == stages.MoveStepBack {
		if doc := iss.Outputs[outFeedback]; doc != "" {
			fmt.Fprintf(&b, "\nSee %s.", filepath.Join(e.Store.Dir(iss.ID), doc))
		}
		class := hooks.Class(iss.Outputs[outClass])
		if files := iss.Outputs["conflict_files"]; files != "" && class == hooks.ClassConflict {
			fmt.Fprintf(&b, "\nConflicting files: %s.", files)
		}
		if skill := e.skillFor(class); skill != "" {
			b.WriteString("\n" + skill)
		}
	}
	b.WriteString("\nFix it and commit, then run `agenttree next` when fixed.")
	return b.String()
}

// queueEntries puts the messages of the history entries iss gained since
// it had before of them in its outbox, as they are written: a message is
// never lost to a move that follows before the controller looks.
func (e *Engine) queueEntries(ctx context.Context, iss *issues.Issue, before int) error {
	box := e.Outbox(iss.ID)
	for i := before; i < len(iss.History); i++ {
		for _, m := range e.entryMessages(iss, i) {
			if _, err := box.Put(ctx, m); err != nil {
				return err
			}
		}
	}
	return nil
}
