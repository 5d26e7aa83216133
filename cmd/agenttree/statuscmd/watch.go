package statuscmd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/sessions/waiton"
	"github.com/agenttree/agenttree/stages"
)

// watchedMessages is how many of the newest messages watch follows.
const watchedMessages = 20

// WatchOptions is what `watch` was asked.
type WatchOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given.
	IssueArg string
	// Interval is how often the issue's files are read.
	Interval        time.Duration
	UntilDone, JSON bool
}

func newCmdWatch(a *cmdutil.App, runF func(context.Context, *WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{App: a}
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Follow one issue live, a line for each change",
		Long: "Follow issue ID live, reading its files every --interval: a line for each move\n" +
			"(stage, escalation, resume), each change of what it waits on and of the\n" +
			"controller's status, each controller action, and each message queued or\n" +
			"delivered. It runs until Ctrl-C, or with --until-done until the issue reaches\n" +
			"a terminal stage or escalates.\n\n" +
			"With --json, each change is one JSON object on a line of its own (JSON Lines), the\n" +
			"first the issue as watching found it: at, issue, kind (state, move, escalated,\n" +
			"escalation_cleared, waiting, controller, message), text (the line printed without\n" +
			"--json), the issue's stage, waiting_on and waiting_for now, and the move or the\n" +
			"message the change is about.\n\n" +
			cmdutil.ExitStatus("0 stopped, "+cmdutil.ExitUsageOrConfig),
		Example: "  agenttree watch 3\n  agenttree watch 3 --until-done --interval 5s\n  agenttree watch 3 --json | jq -r 'select(.kind == \"move\") | .move.to'",
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return watchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Interval, "interval", time.Second, "how often to read the issue's files")
	cmd.Flags().BoolVar(&opts.UntilDone, "until-done", false, "stop when the issue reaches a terminal stage or escalates")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print each change as one JSON object per line (JSON Lines)")
	return cmd
}

func watchRun(ctx context.Context, opts *WatchOptions) error {
	if opts.Interval <= 0 {
		return fmt.Errorf("--interval must be more than zero, not %s", opts.Interval)
	}
	a := cmds{opts.App}
	e, id, err := a.EngineFor(ctx, opts.IssueArg)
	if err != nil {
		return err
	}
	return a.watch(ctx, e, id, opts.Interval, opts.UntilDone, opts.JSON)
}

// watch prints a line for each change of issue id until ctx is done
// or, with untilDone, the issue is done or escalated; asJSON, a JSON
// object (WatchEvent).
func (a cmds) watch(ctx context.Context, e *engine.Engine, id int, every time.Duration, untilDone, asJSON bool) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	enc := json.NewEncoder(a.Out)
	var prev *sighting
	for {
		cur, err := look(ctx, e, id)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, c := range changes(prev, cur) {
			if !asJSON {
				fmt.Fprintf(a.Out, "%s  %s\n", now.Format(time.TimeOnly), c.text)
				continue
			}
			if err := enc.Encode(c.event(now, cur)); err != nil {
				return err
			}
		}
		if untilDone && cur.done(e.Config) {
			return nil
		}
		prev = cur
		select {
		case <-ctx.Done():
			return nil // Ctrl-C is how watching ends
		case <-tick.C:
		}
	}
}

// sighting is what watch read of an issue at one moment.
type sighting struct {
	iss  *issues.Issue
	wait waiton.Waiting
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
	s.wait = waiton.On(e.Config, iss, p, waiton.LookAtAgent(ctx, e, id))
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

// WatchEvent is one line of `watch --json`: a change of the issue, the
// first its state when watching began.
type WatchEvent struct {
	At    time.Time `json:"at"`
	Issue int       `json:"issue"`
	// Kind is what changed: state (the first line), move, escalated,
	// escalation_cleared, waiting (what it waits on), controller (its
	// status or an action it logged), message (queued or delivered).
	Kind string `json:"kind"`
	// Text is the line watch prints for it without --json.
	Text string `json:"text"`
	// Stage, WaitingOn and WaitingFor are the issue's now.
	Stage      string `json:"stage"`
	WaitingOn  string `json:"waiting_on"`
	WaitingFor Waiter `json:"waiting_for,omitempty"`
	// Move is the history entry a move is, Message the message queued or
	// delivered.
	Move    *issues.HistoryEntry `json:"move,omitempty"`
	Message *WatchMessage        `json:"message,omitempty"`
}

// WatchMessage is a message of the issue's outbox, in a WatchEvent.
type WatchMessage struct {
	ID    string           `json:"id"`
	To    outbox.Recipient `json:"to"`
	Kind  string           `json:"kind,omitempty"`
	State outbox.State     `json:"state"`
	Text  string           `json:"text"`
}

// The kinds of change watch reports (WatchEvent.Kind).
const (
	changeState      = "state"
	changeMove       = "move"
	changeEscalated  = "escalated"
	changeCleared    = "escalation_cleared"
	changeWaiting    = "waiting"
	changeController = "controller"
	changeMessage    = "message"
)

// change is one change watch saw: its kind, its line, and the move or
// message it is about.
type change struct {
	kind string
	text string
	move *issues.HistoryEntry
	msg  *outbox.Message
}

// event is c as a WatchEvent at now, cur the issue as watch last saw it.
func (c change) event(now time.Time, cur *sighting) WatchEvent {
	ev := WatchEvent{At: now.UTC(), Issue: cur.iss.ID, Kind: c.kind, Text: c.text, Stage: cur.iss.Stage,
		WaitingOn: cur.wait.What, WaitingFor: cur.wait.Who, Move: c.move}
	if m := c.msg; m != nil {
		ev.Message = &WatchMessage{ID: m.ID, To: m.To, Kind: m.Kind, State: m.State, Text: m.Text}
	}
	return ev
}

// changes are what changed from prev to cur, each line said once; the
// first look says where the issue is.
func changes(prev, cur *sighting) []change {
	if prev == nil {
		return []change{{kind: changeState, text: fmt.Sprintf("issue %d (%s) at %s: %s", cur.iss.ID, cmdutil.SafeTitle(cur.iss.Title), cmdutil.SafeText(cur.iss.Stage), cmdutil.SafeText(cur.wait.What))}}
	}
	var out []change
	say := func(c change) {
		if !slices.ContainsFunc(out, func(o change) bool { return o.text == c.text }) {
			out = append(out, c)
		}
	}
	moves := newMoves(prev.iss, cur.iss)
	var said []string // the reasons the lines above give
	for _, h := range moves {
		say(change{kind: changeMove, text: cmdutil.SafeText(fmt.Sprintf("%s (by %s)", waiton.HistoryText(h), h.Actor)), move: &h})
		said = append(said, h.Reason)
	}
	escalated := prev.iss.Escalated == nil && cur.iss.Escalated != nil
	switch esc := cur.iss.Escalated; {
	case escalated:
		said = append(said, esc.Reason)
		say(change{kind: changeEscalated, text: fmt.Sprintf("escalated (%s) at %s: %s; a person resolves it: %s", cmdutil.SafeText(string(esc.Kind)), cmdutil.SafeText(esc.Stage), cmdutil.SafeText(esc.Reason),
			strings.Join(ResolveCommands(cur.iss.ID), " | "))})
	case prev.iss.Escalated != nil && esc == nil:
		say(change{kind: changeCleared, text: "escalation cleared"})
	}
	// A move or an escalation says what the issue waits on now.
	if len(moves) == 0 && !escalated {
		if cur.wait.What != prev.wait.What {
			say(change{kind: changeWaiting, text: "waiting on: " + cmdutil.SafeText(cur.wait.What)})
		}
		if st := lines.First(cur.poll.Status); cur.poll.Status != prev.poll.Status && st != "" && !strings.Contains(cur.wait.What, st) {
			say(change{kind: changeController, text: "controller: " + cmdutil.SafeText(st)})
		}
	}
	for _, act := range newActions(prev.poll.Actions, cur.poll.Actions) {
		if !saidBy(said, act.What) {
			say(change{kind: changeController, text: "controller: " + cmdutil.SafeText(act.What)})
		}
	}
	for _, c := range messageChanges(prev.messages, cur.messages) {
		say(c)
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
func messageChanges(prev, cur []outbox.Message) []change {
	was := make(map[string]outbox.State, len(prev))
	for _, m := range prev {
		was[m.ID] = m.State
	}
	var out []change
	for _, m := range cur {
		state, seen := was[m.ID]
		switch {
		case m.State == outbox.Sent && state != outbox.Sent:
			out = append(out, change{kind: changeMessage, msg: &m,
				text: fmt.Sprintf("message to the %s delivered (%s): %s", m.To, m.Kind, textsafe.Line(lines.First(m.Text), 100))})
		case !seen:
			out = append(out, change{kind: changeMessage, msg: &m,
				text: fmt.Sprintf("message to the %s queued (%s): %s", m.To, m.Kind, textsafe.Line(lines.First(m.Text), 100))})
		}
	}
	return out
}
