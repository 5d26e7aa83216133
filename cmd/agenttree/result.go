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
	switch res.Status {
	case engine.StatusAdvanced:
		a.printMoved(res)
	case engine.StatusBlocked:
		a.lines("", res.Notes)
		if res.Conflict {
			fmt.Fprintf(a.out, "issue %d was changed by another agenttree process while this one ran; nothing was done. Look at it (`agenttree status %d`) and run the command again if it still applies.\n", res.Issue, res.Issue)
			return
		}
		fmt.Fprintf(a.out, "issue %d is blocked at %s; fix these, then run `agenttree next` again:\n", res.Issue, res.From)
		a.lines("  - ", res.Reasons)
	case engine.StatusWaiting:
		fmt.Fprintf(a.out, "issue %d is waiting at %s: %s\n", res.Issue, res.From, strings.Join(res.Reasons, "; "))
	case engine.StatusFinal:
		a.lines("", res.Notes)
		fmt.Fprintf(a.out, "%s\n", strings.Join(res.Reasons, "; "))
	}
}

// printMoved says where the issue went, why, and what to do there.
func (a *app) printMoved(res *engine.Result) {
	verb := "moved"
	if res.DryRun {
		verb = "would move"
	}
	fmt.Fprintf(a.out, "issue %d %s %s → %s (%s)\n", res.Issue, verb, res.From, res.To, res.Kind)
	a.lines("  ", res.Reasons)
	a.lines("  skipped ", res.Skipped)
	a.lines("  ", res.Notes)
	if len(res.Unfinished) > 0 {
		fmt.Fprintf(a.out, "but the work of entering %s did not finish; fix this, then run `agenttree next -i %d` to finish it:\n", res.To, res.Issue)
		a.lines("  - ", res.Unfinished)
	}
	if res.Instructions != "" {
		fmt.Fprintln(a.out)
		fmt.Fprintln(a.out, res.Instructions)
	}
}

// lines prints each of list on a line of its own after prefix.
func (a *app) lines(prefix string, list []string) {
	for _, l := range list {
		fmt.Fprintln(a.out, prefix+l)
	}
}
