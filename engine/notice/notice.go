// Package notice words what agenttree tells an issue's agent and the
// people running the pipeline when the issue's history changes: work sent
// back (with what failed, where to read more and what to do about that
// kind of failure), an escalation, a person's move, a review waiting,
// entry work that failed. The wording reads an issue and writes nothing;
// Queue puts the words into the issue's outbox, under the outbox's own
// lock, for the controller to deliver.
package notice

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/docs/skills"
	"github.com/agenttree/agenttree/engine/breaker"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

// What the engine keeps on the issue of the failure its last step back
// was for (outputs), for the messages and instructions that follow it.
const (
	OutClass    = "failure_class"
	OutFeedback = "failure_feedback"
)

// Book words the messages of one pipeline.
type Book struct {
	Config *stages.Config
	// IssueDir is the directory of an issue; SkillsDir holds a
	// repository's own skill texts (_agenttree/skills).
	IssueDir  func(id int) string
	SkillsDir string
	// Vars are the placeholders an instructions file may use for iss.
	Vars func(*issues.Issue) map[string]string
}

// Fill puts iss's values in the placeholders of an instructions file
// (`agenttree approve {{issue_id}}`). A placeholder it has no value for is
// left as written: the file is prose, and its braces may mean something
// else.
func (b *Book) Fill(text string, iss *issues.Issue) string {
	if b.Vars == nil || !strings.Contains(text, "{{") {
		return text
	}
	vars := b.Vars(iss)
	return stages.Expand(text, func(name string, start, end int) string {
		if v, ok := vars[name]; ok {
			return v
		}
		return text[start:end]
	})
}

// skillFile is the skill file for a kind of failure, or "".
func skillFile(class hooks.Class) string {
	switch class {
	case hooks.ClassCIFailed:
		return skills.CIFailure
	case hooks.ClassNoNewCI, hooks.ClassPollingTimeout, hooks.ClassCICancelled, hooks.ClassCIEnvironment:
		return skills.CIStalled
	case hooks.ClassConflict:
		return skills.MergeConflict
	}
	return ""
}

// Skill is what iss's agent is told to do about a failure of class: the
// repository's skill file, else agenttree's default (docs/skills), with
// its placeholders filled; "" for none.
func (b *Book) Skill(class hooks.Class, iss *issues.Issue) string {
	name := skillFile(class)
	if name == "" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(b.SkillsDir, name))
	if err != nil {
		if data, err = skills.Read(name); err != nil {
			return ""
		}
	}
	return b.Fill(strings.TrimSpace(string(data)), iss)
}

// Messages are what the issue's state says people and its agent must be
// told: what its latest history entry says (Entry), a human review
// waiting and entry work a person must see to (to the manager). Each is
// keyed by the history entry it comes from, so putting them in the outbox
// again adds nothing.
func (b *Book) Messages(iss *issues.Issue) []outbox.Message {
	n := len(iss.History)
	if n == 0 {
		return nil
	}
	out := b.Entry(iss, n-1)
	last, key := iss.History[n-1], "h"+strconv.Itoa(n-1)
	if node, ok := b.Config.Node(iss.Stage); ok && node.HumanReview() && iss.Escalated == nil && last.To == iss.Stage && last.Kind != stages.MoveEscalate {
		out = append(out, outbox.Message{Key: key + "-review", To: outbox.ToManager, Kind: "review",
			Text: fmt.Sprintf("issue %d (%s) waits for your review at %s: `agenttree approve %d`, or `agenttree reject %d --message TEXT`",
				iss.ID, iss.Title, iss.Stage, iss.ID, iss.ID)})
	}
	if p := iss.EntryPending; p != nil && len(p.Failures) > 0 && iss.Escalated == nil {
		out = append(out, outbox.Message{Key: fmt.Sprintf("%s-entry-%d", key, p.Done), To: outbox.ToManager, Kind: "entry",
			Text: fmt.Sprintf("issue %d (%s) is at %s, but its entry work did not finish: %s", iss.ID, iss.Title, p.Stage, reasons(p.Failures))})
	}
	return out
}

// Entry is what history entry i of iss tells the agent and people, each
// message keyed by the entry: work sent back (a step back, a rejection),
// an escalation (people, and the agent, told to stop), a person's move of
// the issue.
func (b *Book) Entry(iss *issues.Issue, i int) []outbox.Message {
	h, key := iss.History[i], "h"+strconv.Itoa(i)
	agent := func(text string) outbox.Message {
		return outbox.Message{Key: key, To: outbox.ToAgent, Kind: string(h.Kind), Text: text}
	}
	switch h.Kind {
	case stages.MoveStepBack:
		out := []outbox.Message{agent(b.back(iss, h))}
		if warn := b.halfOpen(iss, i); warn != "" {
			out = append(out, outbox.Message{Key: key + "-breaker", To: outbox.ToManager, Kind: "breaker", Text: warn})
		}
		return out
	case stages.MoveReject:
		return []outbox.Message{agent(b.back(iss, h))}
	case stages.MoveEscalate:
		return []outbox.Message{
			{Key: key, To: outbox.ToManager, Kind: "escalation",
				Text: fmt.Sprintf("issue %d (%s) needs a person at %s: %s; resolve it: `agenttree resume %d --reason TEXT` (try again), `agenttree skip %d --reason TEXT`, `agenttree abort %d --reason TEXT`, or `agenttree move %d STAGE --reason TEXT`",
					iss.ID, iss.Title, h.To, textsafe.OneLine(h.Reason), iss.ID, iss.ID, iss.ID, iss.ID)},
			{Key: key + "-agent", To: outbox.ToAgent, Kind: "escalation",
				Text: fmt.Sprintf("issue %d is stopped for a person at %s: %s. Do not work on it until you are told it goes on.", iss.ID, h.To, textsafe.OneLine(h.Reason))},
		}
	case stages.MoveResume:
		text := fmt.Sprintf("issue %d goes on at %s: a person resumed it (%s).", iss.ID, h.To, textsafe.OneLine(h.Reason))
		if node, ok := b.Config.Node(h.To); ok && !node.Controller() {
			text += "\n" + b.Instructions(node, iss)
		} else {
			text += " The controller tries the stage again; you are told if your work is needed."
		}
		return []outbox.Message{agent(text)}
	case stages.MoveAbort, stages.MoveSkip, stages.MoveManual:
		text := fmt.Sprintf("issue %d was moved %s → %s by the %s (%s): %s.", iss.ID, h.From, h.To, h.Actor, h.Kind, textsafe.OneLine(h.Reason))
		if node, ok := b.Config.Node(h.To); ok && node.Terminal() != stages.TerminalNone {
			text += " It is finished: stop working on it."
		} else if ok {
			text += "\n" + b.Instructions(node, iss)
		}
		return []outbox.Message{agent(text)}
	}
	return nil
}

// halfOpen warns people of the half-open breaker of iss that its step
// back, history entry i, left (docs/CONFIG.md, circuit_breaker): where it
// stands and what closes or opens it. Only the latest entry's breaker is
// the one iss holds.
func (b *Book) halfOpen(iss *issues.Issue, i int) string {
	br := iss.Breaker
	if i != len(iss.History)-1 || br == nil || br.State != issues.BreakerHalfOpen || iss.Escalated != nil {
		return ""
	}
	h := iss.History[i]
	node, _ := b.Config.Node(h.From)
	return fmt.Sprintf("issue %d (%s) failed at %s again: %s; to look: `agenttree status %d --block`",
		iss.ID, iss.Title, h.From, breaker.HalfOpen(*br, breaker.Thresholds(b.Config, node)), iss.ID)
}

// reasons are failures' reasons as one line each, joined.
func reasons(rs []string) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = textsafe.OneLine(r)
	}
	return strings.Join(out, "; ")
}

// back is what the agent is told when its work is sent back: why, where
// to read more (the document the failing hook wrote, the conflicting
// files), what to do about that kind of failure, and to run `agenttree
// next`.
func (b *Book) back(iss *issues.Issue, h issues.HistoryEntry) string {
	var s strings.Builder
	verb := "stepped back"
	if h.Kind == stages.MoveReject {
		verb = "sent back by a reviewer"
	}
	reason := textsafe.OneLine(h.Reason)
	if h.Kind == stages.MoveReject {
		// A person's review, which may be written over several lines.
		reason = strings.TrimSpace(h.Reason)
	}
	fmt.Fprintf(&s, "issue %d was %s %s → %s: %s", iss.ID, verb, h.From, h.To, reason)
	if h.Kind == stages.MoveStepBack {
		if doc := iss.Outputs[OutFeedback]; doc != "" {
			fmt.Fprintf(&s, "\nSee %s.", filepath.Join(b.IssueDir(iss.ID), doc))
		}
		class := hooks.Class(iss.Outputs[OutClass])
		if files := iss.Outputs["conflict_files"]; files != "" && class == hooks.ClassConflict {
			fmt.Fprintf(&s, "\nConflicting files: %s.", files)
		}
		if skill := b.Skill(class, iss); skill != "" {
			s.WriteString("\n" + skill)
		}
	}
	if node, ok := b.Config.Node(h.To); ok && node.Controller() {
		// Back to be checked again (a head agenttree rebased): nothing
		// for the agent to fix, but its branch was rewritten.
		s.WriteString("\nNothing to fix: the controller checks it again. Pull your branch before you change anything (`git pull --rebase`).")
		return s.String()
	}
	if skillFile(hooks.Class(iss.Outputs[OutClass])) == skills.CIStalled && h.Kind == stages.MoveStepBack {
		// No verdict on the code: nothing to fix.
		s.WriteString("\nRun `agenttree next` when ready.")
		return s.String()
	}
	s.WriteString("\nFix it and commit, then run `agenttree next` when fixed.")
	return s.String()
}
