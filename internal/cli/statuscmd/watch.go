package statuscmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/cli/cmdutil"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/outbox"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

// watchedMessages is how many of the newest messages watch follows.
const watchedMessages = 20

func (a cmds) watchCmd() *cobra.Command {
	var every time.Duration
	var untilDone bool
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Follow one issue live, a line for each change",
		Long: "Follow issue ID live, reading its files every --interval: a line for each move\n" +
			"(stage, escalation, resume), each change of what it waits on and of the\n" +
			"controller's status, each controller action, and each message queued or\n" +
			"delivered. It runs until Ctrl-C, or with --until-done until the issue reaches\n" +
			"a terminal stage or escalates.\n\n" +
			"Exit status: 0 stopped, 2 bad usage or config.",
		Example: "  agenttree watch 3\n  agenttree watch 3 --until-done --interval 5s",
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if every <= 0 {
				return fmt.Errorf("--interval must be more than zero, not %s", every)
			}
			e, id, err := a.EngineFor(args[0])
			if err != nil {
				return err
			}
			return a.watch(e, id, every, untilDone)
		},
	}
	cmd.Flags().DurationVar(&every, "interval", time.Second, "how often to read the issue's files")
	cmd.Flags().BoolVar(&untilDone, "until-done", false, "stop when the issue reaches a terminal stage or escalates")
	return cmd
}

// watch prints a line for each change of issue id until a.Ctx is done
// or, with untilDone, the issue is done or escalated.
func (a cmds) watch(e *engine.Engine, id int, every time.Duration, untilDone bool) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var prev *sighting
	for {
		cur, err := look(a.Ctx, e, id)
		if err != nil {
			return err
		}
		now := time.Now().Format(time.TimeOnly)
		for _, l := range changes(prev, cur) {
			fmt.Fprintf(a.Out, "%s  %s\n", now, l)
		}
		if untilDone && cur.done(e.Config) {
			return nil
		}
		prev = cur
		select {
		case <-a.Ctx.Done():
			return nil // Ctrl-C is how watching ends
		case <-tick.C:
		}
	}
}

// sighting is what watch read of an issue at one moment.
type sighting struct {
	iss  *issues.Issue
	wait waiting
	// poll is the controller's polling state; empty when there is none.
	poll     issues.Poll
	messages []outbox.Message
}

func look(ctx context.Context, e *engine.Engine, id int) (*sighting, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	s := &sighting{iss: iss}
	p := watchPoll(e, id)
	if p != nil && p.PR == iss.PRNumber {
		s.poll = *p
	} else {
		p = nil
	}
	s.wait = waitingOn(e.Config, iss, p, lookAtAgent(ctx, e, id))
	if s.messages, err = e.Outbox(id).Recent(watchedMessages); err != nil {
		return nil, fmt.Errorf("read the messages of issue %d: %w", id, err)
	}
	return s, nil
}

// done reports whether the issue is where --until-done stops: escalated,
// or at a terminal stage with its entry work finished.
func (s *sighting) done(cfg *stages.Config) bool {
	if s.iss.Escalated != nil {
		return true
	}
	n, ok := cfg.Node(s.iss.Stage)
	return ok && n.Terminal() != stages.TerminalNone && s.iss.EntryPending == nil
}

// changes are the lines saying what changed from prev to cur, each said
// once; the first look says where the issue is.
func changes(prev, cur *sighting) []string {
	if prev == nil {
		return []string{fmt.Sprintf("issue %d (%s) at %s: %s", cur.iss.ID, cmdutil.SafeTitle(cur.iss.Title), cmdutil.SafeText(cur.iss.Stage), cmdutil.SafeText(cur.wait.what))}
	}
	var out []string
	say := func(l string) {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	moves := newMoves(prev.iss, cur.iss)
	var said []string // the reasons the lines above give
	for _, h := range moves {
		say(cmdutil.SafeText(fmt.Sprintf("%s (by %s)", historyText(h), h.Actor)))
		said = append(said, h.Reason)
	}
	escalated := prev.iss.Escalated == nil && cur.iss.Escalated != nil
	switch esc := cur.iss.Escalated; {
	case escalated:
		said = append(said, esc.Reason)
		say(fmt.Sprintf("escalated (%s) at %s: %s; a person resolves it: %s", cmdutil.SafeText(string(esc.Kind)), cmdutil.SafeText(esc.Stage), cmdutil.SafeText(esc.Reason),
			strings.Join(ResolveCommands(cur.iss.ID), " | ")))
	case prev.iss.Escalated != nil && esc == nil:
		say("escalation cleared")
	}
	// A move or an escalation says what the issue waits on now.
	if len(moves) == 0 && !escalated {
		if cur.wait.what != prev.wait.what {
			say("waiting on: " + cmdutil.SafeText(cur.wait.what))
		}
		if st := lines.First(cur.poll.Status); cur.poll.Status != prev.poll.Status && st != "" && !strings.Contains(cur.wait.what, st) {
			say("controller: " + cmdutil.SafeText(st))
		}
	}
	for _, act := range newActions(prev.poll.Actions, cur.poll.Actions) {
		if !saidBy(said, act.What) {
			say("controller: " + cmdutil.SafeText(act.What))
		}
	}
	for _, l := range messageChanges(prev.messages, cur.messages) {
		say(l)
	}
	return out
}

// newMoves are the history entries cur has that prev did not, but the
// escalations, said from the issue's escalation itself.
func newMoves(prev, cur *issues.Issue) []issues.HistoryEntry {
	if len(cur.History) < len(prev.History) {
		return nil // history only grows; this is another issue's file
	}
	var out []issues.HistoryEntry
	for _, h := range cur.History[len(prev.History):] {
		if h.Kind != stages.MoveEscalate {
			out = append(out, h)
		}
	}
	return out
}

// newActions are the controller's actions logged since prev. The log
// keeps its newest entries only, so prev's last one is looked for.
func newActions(prev, cur []issues.Action) []issues.Action {
	if len(prev) == 0 {
		return cur
	}
	last := prev[len(prev)-1]
	for i := len(cur) - 1; i >= 0; i-- {
		if cur[i].At.Equal(last.At) && cur[i].What == last.What {
			return cur[i+1:]
		}
	}
	return cur // a new log: the PR changed
}

// saidBy reports whether one of the reasons already said says what the
// controller logged: it logs the moves it makes and its escalations, with
// their reason.
func saidBy(reasons []string, what string) bool {
	return slices.ContainsFunc(reasons, func(r string) bool {
		return r != "" && strings.Contains(what, lines.First(r))
	})
}

// messageChanges are the messages queued or delivered since prev.
func messageChanges(prev, cur []outbox.Message) []string {
	was := make(map[string]outbox.State, len(prev))
	for _, m := range prev {
		was[m.ID] = m.State
	}
	var out []string
	for _, m := range cur {
		state, seen := was[m.ID]
		switch {
		case m.State == outbox.Sent && state != outbox.Sent:
			out = append(out, fmt.Sprintf("message to the %s delivered (%s): %s", m.To, m.Kind, textsafe.Line(lines.First(m.Text), 100)))
		case !seen:
			out = append(out, fmt.Sprintf("message to the %s queued (%s): %s", m.To, m.Kind, textsafe.Line(lines.First(m.Text), 100)))
		}
	}
	return out
}
