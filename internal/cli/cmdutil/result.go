package main

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/engine"
)

// report prints a transition result and turns its status into the exit code.
func (a *app) report(res *engine.Result, asJSON bool) error {
	if asJSON {
		if err := a.printJSON(res); err != nil {
			return err
		}
	} else {
		a.printResult(res)
	}
	if code := resultCode(res); code != exitOK {
		return silentExit(code)
	}
	return nil
}

func (a *app) printResult(res *engine.Result) {
	for _, w := range res.Warnings {
		fmt.Fprintln(a.err, "warning:", w)
	}
	if res.Conflict {
		a.lines("", res.Notes)
		fmt.Fprintf(a.out, "issue %d was changed by another agenttree process while this one ran; nothing was done: %s\nLook at it (`agenttree status %d`) and run the command again if it still applies.\n",
			res.Issue, safeText(strings.Join(res.Reasons, "; ")), res.Issue)
		return
	}
	switch {
	case res.Status == engine.StatusAdvanced:
		a.printMoved(res)
	case res.Status == engine.StatusBlocked && res.Review:
		// Whoever runs this is a person: agents cannot leave a review.
		a.lines("", res.Notes)
		fmt.Fprintf(a.out, "issue %d %s at %s yet:\n", res.Issue, a.paint().Warn("cannot be approved"), res.From)
		a.lines("  - ", res.Reasons)
		fmt.Fprintf(a.out, "approve it once these pass (`agenttree approve %d`), or send it back with what to change (`agenttree reject %d --message TEXT`)\n",
			res.Issue, res.Issue)
	case res.Status == engine.StatusBlocked:
		a.lines("", res.Notes)
		fmt.Fprintf(a.out, "issue %d %s at %s; fix these, then run `agenttree next` again:\n", res.Issue, a.paint().Warn("is blocked"), res.From)
		a.lines("  - ", res.Reasons)
		if res.Instructions != "" {
			fmt.Fprintln(a.out)
			fmt.Fprintln(a.out, res.Instructions)
		}
	case res.Status == engine.StatusWaiting:
		a.lines("", res.Notes)
		fmt.Fprintf(a.out, "issue %d is waiting at %s: %s\n", res.Issue, res.From, safeText(strings.Join(res.Reasons, "; ")))
	case res.Status == engine.StatusFinal:
		a.lines("", res.Notes)
		fmt.Fprintf(a.out, "%s\n", safeText(strings.Join(res.Reasons, "; ")))
	case res.Status == engine.StatusSteppedBack:
		a.printSteppedBack(res)
	case res.Status == engine.StatusEscalated:
		a.lines("", res.Notes)
		if e := res.Escalated; e != nil {
			fmt.Fprintf(a.out, "issue %d %s at %s and waits for a person: %s\n", res.Issue, a.paint().Bad("is escalated"), e.Stage, safeText(e.Reason))
		}
		fmt.Fprintf(a.out, "a person resolves it: `agenttree resume %d` (try again), `agenttree skip %d --reason TEXT`, `agenttree abort %d`, or `agenttree move %d STAGE --reason TEXT`\n",
			res.Issue, res.Issue, res.Issue, res.Issue)
	}
}

// printSteppedBack says where a failure sent the issue, why, and where to
// read more.
func (a *app) printSteppedBack(res *engine.Result) {
	a.lines("", res.Notes)
	sb := res.StepBack
	fmt.Fprintf(a.out, "issue %d %s %s → %s: %s", res.Issue, a.paint().Bad("stepped back"), sb.From, sb.To, safeText(sb.Reason))
	if sb.Feedback != "" {
		fmt.Fprintf(a.out, "; see %s", sb.Feedback)
	}
	fmt.Fprintln(a.out)
	if sb.MaxRetries > 0 && sb.Attempt > 0 {
		fmt.Fprintf(a.out, "  attempt %d of %d\n", sb.Attempt, sb.MaxRetries)
	}
	if sb.Message != "" && sb.Message != sb.Reason {
		fmt.Fprintf(a.out, "  message to the agent: %s\n", safeText(sb.Message))
	}
	if res.Instructions != "" {
		fmt.Fprintln(a.out)
		fmt.Fprintln(a.out, res.Instructions)
	}
}

// printMoved says where the issue went, why, and what to do there.
func (a *app) printMoved(res *engine.Result) {
	verb := "moved"
	if res.DryRun {
		verb = "would move"
	}
	fmt.Fprintf(a.out, "issue %d %s %s → %s (%s)\n", res.Issue, a.paint().Good(verb), res.From, res.To, res.Kind)
	a.lines("  ", res.Reasons)
	a.lines("  skipped ", res.Skipped)
	a.lines("  ", res.Notes)
	if len(res.Unfinished) > 0 {
		fmt.Fprintf(a.out, "but the work of entering %s did not finish (`agenttree controller` tries it again and tells whoever must act; `agenttree next -i %d` tries it now):\n", res.To, res.Issue)
		a.lines("  - ", res.Unfinished)
		return // the stage's instructions wait for its entry work
	}
	if res.Instructions != "" {
		fmt.Fprintln(a.out)
		fmt.Fprintln(a.out, res.Instructions)
	}
}

// lines prints each of list on a line of its own after prefix, safe for
// a terminal: reasons carry what hooks and agents wrote.
func (a *app) lines(prefix string, list []string) {
	for _, l := range list {
		fmt.Fprintln(a.out, prefix+safeText(l))
	}
}
