package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/cmd/agenttree/democmd/demoagent"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/stages"
)

// footer is the change someone lands on main while the agent works: it
// touches the lines the agent's change touches, so the two conflict.
const footer = "- Fix the footer\n"

// steps are the story's steps, in order; the demo fails unless each
// happened.
var steps = []string{
	"the agent implemented and ran next",
	"the controller opened the PR",
	"CI failed and the issue was stepped back",
	"the agent was told of the CI failure in its pane",
	"the agent was told of the conflict in its pane",
	"the issue reached implementation_review",
	"a person approved",
	"the PR was merged and the issue accepted",
}

// story plays the story and watches it happen.
func (d *run) story(ctx context.Context) error {
	if err := d.startController(ctx); err != nil {
		return err
	}
	out, err := d.agenttree(ctx, "issue", "create", "Add the checkout page", "--json")
	if err != nil {
		return err
	}
	var created issues.Issue
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		return fmt.Errorf("issue create printed %q: %w", out, err)
	}
	d.tl.say(d.since(), "a person creates issue %d %q at %s", created.ID, created.Title, created.Stage)
	if out, err = d.agenttree(ctx, "start", fmt.Sprint(created.ID)); err != nil {
		return err
	}
	d.tl.say(d.since(), "agenttree start %d: %s", created.ID, firstLine(out))
	return d.watch(ctx, created.ID)
}

// watch follows the issue until it is accepted, printing each change,
// and plays the person and the colleague when their turn comes.
func (d *run) watch(ctx context.Context, id int) error {
	store, err := issues.Open(filepath.Join(d.repo, "_agenttree"))
	if err != nil {
		return err
	}
	box := outbox.Open(filepath.Join(store.HostDir(id), "outbox"))
	done := map[string]bool{}
	seenHistory, seenSent := 0, map[string]bool{}
	ctlLog := &logTail{path: d.path("controller.log")}
	tick := 200 * time.Millisecond
	for {
		iss, err := store.Get(id)
		if err != nil {
			return err
		}
		for _, h := range iss.History[seenHistory:] {
			d.sayMove(h, done)
		}
		seenHistory = len(iss.History)
		if iss.PRNumber > 0 {
			done[steps[1]] = true // the controller's log says it opened it
		}
		if sent, err := box.Recent(0); err == nil {
			for _, m := range sent {
				if !seenSent[m.ID] {
					seenSent[m.ID] = true
					d.sayDelivered(m, done)
				}
			}
		}
		for _, what := range ctlLog.hookResults() {
			d.tl.say(d.since(), "the controller: %s", what)
		}
		if err := d.turn(ctx, iss, done); err != nil {
			return err
		}
		if iss.Stage == "accepted" && iss.EntryPending == nil {
			return d.check(ctx, done)
		}
		select {
		case <-ctx.Done():
			return d.missing(done, fmt.Errorf("it did not end in time (%v)", ctx.Err()))
		case <-time.After(tick):
		}
	}
}

// sayMove prints one history entry and notes the step it is.
func (d *run) sayMove(h issues.HistoryEntry, done map[string]bool) {
	switch {
	case h.Kind == issues.KindCreate:
		return
	case h.Kind == stages.MoveStepBack:
		d.tl.say(d.since(), "%s → %s, stepped back by the %s: %s", h.From, h.To, h.Actor, firstLine(h.Reason))
		if strings.Contains(h.Reason, "CI failed") {
			done[steps[2]] = true
		}
		return
	case h.From == "implement" && h.Actor == "agent":
		done[steps[0]] = true
	case h.To == "implementation_review":
		done[steps[5]] = true
	case h.To == "accepted":
		done[steps[7]] = true
	}
	d.tl.say(d.since(), "%s → %s (%s, by the %s)", h.From, h.To, h.Kind, h.Actor)
}

// sayDelivered prints a message typed into a pane.
func (d *run) sayDelivered(m outbox.Message, done map[string]bool) {
	d.tl.say(d.since(), "typed into the %s's pane: %s", m.To, firstLine(m.Text))
	switch demoagent.Classify(m.Text) {
	case demoagent.KindCIFailed:
		done[steps[3]] = true
	case demoagent.KindConflict:
		done[steps[4]] = true
	}
}

// turn plays the others of the story: after CI failed, a colleague lands
// a change on main that conflicts with the agent's; at the review, a
// person approves.
func (d *run) turn(ctx context.Context, iss *issues.Issue, done map[string]bool) error {
	if done[steps[2]] && !done["landed"] {
		done["landed"] = true
		if err := d.landOnMain(ctx); err != nil {
			return err
		}
		d.tl.say(d.since(), "meanwhile a colleague lands a change to %s on main, where the agent's change is", demoagent.Changelog)
	}
	if iss.Stage == "implementation_review" && !done[steps[6]] {
		out, err := d.agenttree(ctx, "approve", fmt.Sprint(iss.ID))
		if err != nil {
			return err
		}
		done[steps[6]] = true
		d.tl.say(d.since(), "a person approves: %s", firstLine(out))
	}
	return nil
}

// landOnMain is the colleague's change, pushed from a clone of their own.
func (d *run) landOnMain(ctx context.Context) error {
	other := d.path("colleague")
	if _, err := d.sh(ctx, d.dir, "git", "clone", "-q", d.bare, other); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(other, demoagent.Changelog), []byte(footer), 0o644); err != nil {
		return err
	}
	for _, s := range [][]string{{"commit", "-q", "-am", "Fix the footer"}, {"push", "-q", "origin", "main"}} {
		if _, err := d.sh(ctx, other, "git", s...); err != nil {
			return err
		}
	}
	return nil
}

// check verifies the end: main holds both changes.
func (d *run) check(ctx context.Context, done map[string]bool) error {
	merged, err := d.sh(ctx, d.dir, "git", "--git-dir", d.bare, "show", "main:"+demoagent.Changelog)
	if err != nil {
		return err
	}
	if merged != footer+demoagent.ChangelogLine {
		return d.missing(done, fmt.Errorf("main's %s is %q, not both changes", demoagent.Changelog, merged))
	}
	d.tl.say(d.since(), "main holds the agent's change and the colleague's")
	return d.missing(done, nil)
}

// missing fails the demo with the steps that did not happen, if any.
func (d *run) missing(done map[string]bool, why error) error {
	var not []string
	for _, s := range steps {
		if !done[s] {
			not = append(not, s)
		}
	}
	if len(not) == 0 && why == nil {
		return nil
	}
	err := fmt.Errorf("%w; missing: %s", errStory, strings.Join(not, "; "))
	if why != nil {
		err = errors.Join(err, why)
	}
	return err
}

// summary says how it went and where the files are.
func (d *run) summary(err error) {
	fmt.Fprintln(d.opts.Out)
	if err != nil {
		fmt.Fprintf(d.opts.Out, "the demo failed after %s: %v\nits files: %s (the controller's log: %s)\n", d.since().Round(time.Millisecond), err, d.dir, d.path("controller.log"))
		return
	}
	fmt.Fprintf(d.opts.Out, "done in %s: every step of the story happened:\n", d.since().Round(100*time.Millisecond))
	for _, s := range steps {
		fmt.Fprintf(d.opts.Out, "  - %s\n", s)
	}
	if n, ok := forgeRequests(d.path("controller.log")); ok {
		fmt.Fprintf(d.opts.Out, "the controller asked the forge %d times: what it would have sent GitHub\n", n)
	}
}
