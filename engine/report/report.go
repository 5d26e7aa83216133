// Package report renders the engine's results for people and agents: a
// transition's Result and a created issue, as text with an exit status.
// The CLI prints them so when it calls the engine itself, and the agent's
// CLI so when the controller answers it over its socket
// (docs/ARCHITECTURE.md): what an agent reads is the same either way.
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/colour"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// MaxShownText bounds one piece of stored text (a reason, a hook's
// failure, a label) in what people are shown.
const MaxShownText = 300

// Safe is stored text as people are shown it: one line, nothing a
// terminal acts on, at most MaxShownText long. Reasons and notes carry
// what hooks and agents wrote.
func Safe(s string) string { return textsafe.Line(s, MaxShownText) }

// Code is the exit status of a transition: 0 moved or final, 1 blocked by
// a gate, stepped back, or moved with entry hooks unfinished, 3 waiting on
// a person or the controller (escalated included).
func Code(res *engine.Result) exitcode.Code {
	if len(res.Unfinished) > 0 && res.Status != engine.StatusWaiting {
		return exitcode.Blocked
	}
	switch res.Status {
	case engine.StatusBlocked, engine.StatusSteppedBack:
		return exitcode.Blocked
	case engine.StatusWaiting, engine.StatusEscalated:
		return exitcode.Waiting
	}
	return exitcode.OK
}

// Printer prints results: the output on Out, warnings on ErrOut, painted
// by Paint.
type Printer struct {
	Out, ErrOut io.Writer
	Paint       colour.Painter
}

// Created says that iss was created, as `issue create` does.
func (p Printer) Created(iss *issues.Issue) {
	fmt.Fprintf(p.Out, "created issue %d %q at %s (flow %s, branch %s)\n", iss.ID, iss.Title, iss.Stage, iss.Flow, iss.Branch)
}

// Result says what a transition did, what stops it, and what to do next.
func (p Printer) Result(res *engine.Result) {
	for _, w := range res.Warnings {
		fmt.Fprintln(p.ErrOut, "warning:", w)
	}
	if res.Conflict {
		p.Lines("", res.Notes)
		fmt.Fprintf(p.Out, "issue %d was changed by another agenttree process while this one ran; nothing was done: %s\nLook at it (`agenttree status %d`) and run the command again if it still applies.\n",
			res.Issue, Safe(strings.Join(res.Reasons, "; ")), res.Issue)
		return
	}
	switch {
	case res.Status == engine.StatusAdvanced:
		p.moved(res)
	case res.Status == engine.StatusBlocked && res.Review:
		// Whoever runs this is a person: agents cannot leave a review.
		p.Lines("", res.Notes)
		fmt.Fprintf(p.Out, "issue %d %s at %s yet:\n", res.Issue, p.Paint.Warn("cannot be approved"), res.From)
		p.Lines("  - ", res.Reasons)
		fmt.Fprintf(p.Out, "approve it once these pass (`agenttree approve %d`), or send it back with what to change (`agenttree reject %d --message TEXT`)\n",
			res.Issue, res.Issue)
	case res.Status == engine.StatusBlocked:
		p.Lines("", res.Notes)
		fmt.Fprintf(p.Out, "issue %d %s at %s; fix these, then run `agenttree next` again:\n", res.Issue, p.Paint.Warn("is blocked"), res.From)
		p.Lines("  - ", res.Reasons)
		if res.Instructions != "" {
			fmt.Fprintln(p.Out)
			fmt.Fprintln(p.Out, res.Instructions)
		}
	case res.Status == engine.StatusWaiting:
		p.Lines("", res.Notes)
		fmt.Fprintf(p.Out, "issue %d is waiting at %s: %s\n", res.Issue, res.From, Safe(strings.Join(res.Reasons, "; ")))
	case res.Status == engine.StatusFinal:
		p.Lines("", res.Notes)
		fmt.Fprintf(p.Out, "%s\n", Safe(strings.Join(res.Reasons, "; ")))
	case res.Status == engine.StatusSteppedBack:
		p.steppedBack(res)
	case res.Status == engine.StatusEscalated:
		p.Lines("", res.Notes)
		if e := res.Escalated; e != nil {
			fmt.Fprintf(p.Out, "issue %d %s at %s and waits for a person: %s\n", res.Issue, p.Paint.Bad("is escalated"), e.Stage, Safe(e.Reason))
		}
		fmt.Fprintf(p.Out, "a person resolves it: `agenttree resume %d --reason TEXT` (try again), `agenttree skip %d --reason TEXT`, `agenttree abort %d --reason TEXT`, or `agenttree move %d STAGE --reason TEXT`\n",
			res.Issue, res.Issue, res.Issue, res.Issue)
	}
}

// steppedBack says where a failure sent the issue, why, and where to read
// more.
func (p Printer) steppedBack(res *engine.Result) {
	p.Lines("", res.Notes)
	sb := res.StepBack
	verb := "stepped back"
	if res.DryRun {
		verb = "would step back"
	}
	fmt.Fprintf(p.Out, "issue %d %s %s → %s: %s", res.Issue, p.Paint.Bad(verb), sb.From, sb.To, Safe(sb.Reason))
	if sb.Feedback != "" {
		fmt.Fprintf(p.Out, "; see %s", sb.Feedback)
	}
	fmt.Fprintln(p.Out)
	if sb.MaxRetries > 0 && sb.Attempt > 0 {
		fmt.Fprintf(p.Out, "  attempt %d of %d\n", sb.Attempt, sb.MaxRetries)
	}
	if sb.Message != "" && sb.Message != sb.Reason {
		fmt.Fprintf(p.Out, "  message to the agent: %s\n", Safe(sb.Message))
	}
	if res.Instructions != "" {
		fmt.Fprintln(p.Out)
		fmt.Fprintln(p.Out, res.Instructions)
	}
}

// moved says where the issue went, why, and what to do there.
func (p Printer) moved(res *engine.Result) {
	verb := "moved"
	if res.DryRun {
		verb = "would move"
	}
	fmt.Fprintf(p.Out, "issue %d %s %s → %s (%s)\n", res.Issue, p.Paint.Good(verb), res.From, res.To, res.Kind)
	p.Lines("  ", res.Reasons)
	p.Lines("  skipped ", res.Skipped)
	p.Lines("  ", res.Notes)
	if len(res.Unfinished) > 0 {
		fmt.Fprintf(p.Out, "but the work of entering %s did not finish (`agenttree controller` tries it again and tells whoever must act; `agenttree next -i %d` tries it now):\n", res.To, res.Issue)
		p.Lines("  - ", res.Unfinished)
		return // the stage's instructions wait for its entry work
	}
	if res.Instructions != "" {
		fmt.Fprintln(p.Out)
		fmt.Fprintln(p.Out, res.Instructions)
	}
}

// Lines prints each of list on a line of its own after prefix, safe for
// a terminal.
func (p Printer) Lines(prefix string, list []string) {
	for _, l := range list {
		fmt.Fprintln(p.Out, prefix+Safe(l))
	}
}
