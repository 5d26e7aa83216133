package engine

import (
	"context"
	"fmt"
	"os"
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
// outbox. The key is what the messages were sent about (scope: the issue's
// version, or the head a watch acted on) and each message's place, so a
// command run again after a crash adds nothing twice.
func (e *Engine) queue(ctx context.Context, iss *issues.Issue, scope string, texts []string) error {
	box := e.Outbox(iss.ID)
	if scope == "" {
		scope = fmt.Sprintf("v%d", iss.Version)
	}
	for i, text := range texts {
		key := fmt.Sprintf("send-%s-%d", scope, i)
		if _, err := box.Put(ctx, outbox.Message{Key: key, To: outbox.ToAgent, Kind: "message", Text: text}); err != nil {
			return err
		}
	}
	return nil
}

// Messages are what the issue's state says people and its agent must be
// told, each keyed by the history entry it comes from: the latest step
// back or rejection (to the agent), an escalation, a human review
// waiting, entry work a person must see to (to the manager). The
// controller puts them in the outbox on every pass; a key already there
// adds nothing, so a message is queued exactly once whatever crashes.
func (e *Engine) Messages(iss *issues.Issue) []outbox.Message {
	n := len(iss.History)
	if n == 0 {
		return nil
	}
	last, key := iss.History[n-1], "h"+strconv.Itoa(n-1)
	var out []outbox.Message
	switch last.Kind {
	case stages.MoveStepBack, stages.MoveReject:
		out = append(out, outbox.Message{Key: key, To: outbox.ToAgent, Kind: string(last.Kind), Text: e.backText(iss, last)})
	case stages.MoveEscalate:
		out = append(out, outbox.Message{Key: key, To: outbox.ToManager, Kind: "escalation",
			Text: fmt.Sprintf("issue %d (%s) needs a person: %s", iss.ID, iss.Title, escalatedReason(iss))})
	}
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

// backText is what the agent is told when its work is sent back: why,
// where to read more, and what to do.
func (e *Engine) backText(iss *issues.Issue, h issues.HistoryEntry) string {
	var b strings.Builder
	verb := "stepped back"
	if h.Kind == stages.MoveReject {
		verb = "sent back by a reviewer"
	}
	fmt.Fprintf(&b, "issue %d was %s %s → %s: %s", iss.ID, verb, h.From, h.To, strings.TrimSpace(h.Reason))
	for _, doc := range []string{"ci_feedback.md", "conflict_feedback.md"} {
		if p := filepath.Join(e.Store.Dir(iss.ID), doc); fileExists(p) && h.Kind == stages.MoveStepBack {
			fmt.Fprintf(&b, "\nSee %s.", p)
		}
	}
	if files := iss.Outputs["conflict_files"]; files != "" {
		fmt.Fprintf(&b, "\nConflicting files: %s.", files)
	}
	if skill := e.skillFor(hooks.Class(iss.Outputs["failure_class"])); skill != "" && h.Kind == stages.MoveStepBack {
		b.WriteString("\n" + skill)
	}
	b.WriteString("\nFix it, commit and push, then run `agenttree next` when fixed.")
	return b.String()
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
