package cmdutil

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// Report prints a transition result and turns its status into the exit code.
func (a *App) Report(res *engine.Result, asJSON bool) error {
	if asJSON {
		if err := a.PrintJSON(res); err != nil {
			return err
		}
	} else {
		a.PrintResult(res)
	}
	if code := ResultCode(res); code != exitcode.OK {
		return SilentExit(code)
	}
	return nil
}

func (a *App) PrintResult(res *engine.Result) {
	for _, w := range res.Warnings {
		fmt.Fprintln(a.ErrOut, "warning:", w)
	}
	if res.Conflict {
		a.Lines("", res.Notes)
		fmt.Fprintf(a.Out, "issue %d was changed by another agenttree process while this one ran; nothing was done: %s\nLook at it (`agenttree status %d`) and run the command again if it still applies.\n",
			res.Issue, SafeText(strings.Join(res.Reasons, "; ")), res.Issue)
		return
	}
	switch {
	case res.Status == engine.StatusAdvanced:
		a.printMoved(res)
	case res.Status == engine.StatusBlocked && res.Review:
		// Whoever runs this is a person: agents cannot leave a review.
		a.Lines("", res.Notes)
		fmt.Fprintf(a.Out, "issue %d %s at %s yet:\n", res.Issue, a.Paint().Warn("cannot be approved"), res.From)
		a.Lines("  - ", res.Reasons)
		fmt.Fprintf(a.Out, "approve it once these pass (`agenttree approve %d`), or send it back with what to change (`agenttree reject %d --message TEXT`)\n",
			res.Issue, res.Issue)
	case res.Status == engine.StatusBlocked:
		a.Lines("", res.Notes)
		fmt.Fprintf(a.Out, "issue %d %s at %s; fix these, then run `agenttree next` again:\n", res.Issue, a.Paint().Warn("is blocked"), res.From)
		a.Lines("  - ", res.Reasons)
		if res.Instructions != "" {
			fmt.Fprintln(a.Out)
			fmt.Fprintln(a.Out, res.Instructions)
		}
	case res.Status == engine.StatusWaiting:
		a.Lines("", res.Notes)
		fmt.Fprintf(a.Out, "issue %d is waiting at %s: %s\n", res.Issue, res.From, SafeText(strings.Join(res.Reasons, "; ")))
	case res.Status == engine.StatusFinal:
		a.Lines("", res.Notes)
		fmt.Fprintf(a.Out, "%s\n", SafeText(strings.Join(res.Reasons, "; ")))
	case res.Status == engine.StatusSteppedBack:
		a.printSteppedBack(res)
	case res.Status == engine.StatusEscalated:
		a.Lines("", res.Notes)
		if e := res.Escalated; e != nil {
			fmt.Fprintf(a.Out, "issue %d %s at %s and waits for a person: %s\n", res.Issue, a.Paint().Bad("is escalated"), e.Stage, SafeText(e.Reason))
		}
		fmt.Fprintf(a.Out, "a person resolves it: `agenttree resume %d --reason TEXT` (try again), `agenttree skip %d --reason TEXT`, `agenttree abort %d --reason TEXT`, or `agenttree move %d STAGE --reason TEXT`\n",
			res.Issue, res.Issue, res.Issue, res.Issue)
	}
}

// printSteppedBack says where a failure sent the issue, why, and where to
// read more.
func (a *App) printSteppedBack(res *engine.Result) {
	a.Lines("", res.Notes)
	sb := res.StepBack
	verb := "stepped back"
	if res.DryRun {
		verb = "would step back"
	}
	fmt.Fprintf(a.Out, "issue %d %s %s → %s: %s", res.Issue, a.Paint().Bad(verb), sb.From, sb.To, SafeText(sb.Reason))
	if sb.Feedback != "" {
		fmt.Fprintf(a.Out, "; see %s", sb.Feedback)
	}
	fmt.Fprintln(a.Out)
	if sb.MaxRetries > 0 && sb.Attempt > 0 {
		fmt.Fprintf(a.Out, "  attempt %d of %d\n", sb.Attempt, sb.MaxRetries)
	}
	if sb.Message != "" && sb.Message != sb.Reason {
		fmt.Fprintf(a.Out, "  message to the agent: %s\n", SafeText(sb.Message))
	}
	if res.Instructions != "" {
		fmt.Fprintln(a.Out)
		fmt.Fprintln(a.Out, res.Instructions)
	}
}

// printMoved says where the issue went, why, and what to do there.
func (a *App) printMoved(res *engine.Result) {
	verb := "moved"
	if res.DryRun {
		verb = "would move"
	}
	fmt.Fprintf(a.Out, "issue %d %s %s → %s (%s)\n", res.Issue, a.Paint().Good(verb), res.From, res.To, res.Kind)
	a.Lines("  ", res.Reasons)
	a.Lines("  skipped ", res.Skipped)
	a.Lines("  ", res.Notes)
	if len(res.Unfinished) > 0 {
		fmt.Fprintf(a.Out, "but the work of entering %s did not finish (`agenttree controller` tries it again and tells whoever must act; `agenttree next -i %d` tries it now):\n", res.To, res.Issue)
		a.Lines("  - ", res.Unfinished)
		return // the stage's instructions wait for its entry work
	}
	if res.Instructions != "" {
		fmt.Fprintln(a.Out)
		fmt.Fprintln(a.Out, res.Instructions)
	}
}

// Lines prints each of list on a line of its own after prefix, safe for
// a terminal: reasons carry what hooks and agents wrote.
func (a *App) Lines(prefix string, list []string) {
	for _, l := range list {
		fmt.Fprintln(a.Out, prefix+SafeText(l))
	}
}
