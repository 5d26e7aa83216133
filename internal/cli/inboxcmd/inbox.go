package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/outbox"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/internal/tmux"
)

// inboxView is an issue's messages, for `agenttree inbox`.
type inboxView struct {
	Issue int `json:"issue"`
	// Undelivered are the messages waiting for their recipient, oldest
	// first; Recent the latest delivered ones.
	Undelivered []outbox.Message `json:"undelivered"`
	Recent      []outbox.Message `json:"recent"`
}

func (a *app) inboxCmd() *cobra.Command {
	var asJSON bool
	var recent int
	var idFlag string
	cmd := &cobra.Command{
		Use:   "inbox [ID]",
		Short: "Show an issue's undelivered messages and the latest delivered ones",
		Long: "Show the messages of issue ID's outbox: those not delivered yet (with why) and the\n" +
			"latest delivered ones, with when and to whom. Without ID (or -i ID), the issue is\n" +
			"AGENTTREE_ISSUE's, else the one the current git branch names. Agents may run it\n" +
			"(from a prompt hook, say) to read what they were told; it changes nothing.",
		Example: "  agenttree inbox 3\n  agenttree inbox --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c, err := a.remote(); err != nil {
				return err
			} else if c != nil {
				return a.ask(c, api.RouteInbox, api.InboxRequest{Recent: recent, JSON: asJSON})
			}
			e, err := a.engine()
			if err != nil {
				return err
			}
			arg := idFlag
			if len(args) == 1 {
				arg = args[0]
			}
			id, err := a.resolveIssue(arg, e.WorkDir)
			if err != nil {
				return err
			}
			return a.showInbox(e, id, recent, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().IntVar(&recent, "recent", 10, "how many delivered messages to show")
	cmd.Flags().StringVarP(&idFlag, "issue", "i", "", "issue id, found as next finds it (default: AGENTTREE_ISSUE, then the git branch)")
	return cmd
}

func (a *app) showInbox(e *engine.Engine, id, recent int, asJSON bool) error {
	if _, err := e.Store.Get(id); err != nil {
		return err
	}
	v, err := readInbox(e.Outbox(id), id, recent)
	if err != nil {
		return err
	}
	if asJSON {
		return a.printJSON(v)
	}
	printInbox(a.out, v, time.Now())
	return nil
}

func readInbox(box *outbox.Box, id, recent int) (inboxView, error) {
	v := inboxView{Issue: id, Undelivered: []outbox.Message{}, Recent: []outbox.Message{}}
	pending, err := box.Pending()
	if err != nil {
		return v, fmt.Errorf("read the outbox of issue %d: %w", id, err)
	}
	v.Undelivered = append(v.Undelivered, pending...)
	if recent <= 0 {
		return v, nil
	}
	// The last recent+len(pending) hold the last recent delivered ones.
	all, err := box.Recent(recent + len(pending))
	if err != nil {
		return v, fmt.Errorf("read the outbox of issue %d: %w", id, err)
	}
	for _, m := range all {
		if m.State == outbox.Sent {
			v.Recent = append(v.Recent, m)
		}
	}
	return v, nil
}

func printInbox(w io.Writer, v inboxView, now time.Time) {
	if len(v.Undelivered)+len(v.Recent) == 0 {
		fmt.Fprintf(w, "issue %d: no messages\n", v.Issue)
		return
	}
	fmt.Fprintf(w, "issue %d: %d undelivered, %d delivered lately\n", v.Issue, len(v.Undelivered), len(v.Recent))
	if len(v.Undelivered) > 0 {
		fmt.Fprintln(w, "undelivered:")
	}
	for _, m := range v.Undelivered {
		head := fmt.Sprintf("  %s, to the %s, queued %s ago", m.State, m.To, age(now.Sub(m.Created)))
		if m.Attempts > 0 {
			head += fmt.Sprintf("; %d attempt(s), last: %s", m.Attempts, m.LastError)
		}
		printMessage(w, head, m)
	}
	if len(v.Recent) > 0 {
		fmt.Fprintln(w, "delivered:")
	}
	for _, m := range v.Recent {
		printMessage(w, fmt.Sprintf("  sent %s, to the %s", m.SentAt.Local().Format(time.DateTime), m.To), m)
	}
}

func printMessage(w io.Writer, head string, m outbox.Message) {
	if m.Kind != "" {
		head += " [" + m.Kind + "]"
	}
	body := strings.TrimLeft(head, " ")
	fmt.Fprintln(w, head[:len(head)-len(body)]+safeText(body))
	for _, l := range strings.Split(strings.TrimRight(textsafe.Sanitize(m.Text), "\n"), "\n") {
		fmt.Fprintln(w, "    "+l)
	}
}

// sendState is where `agenttree send` left its message.
type sendState string

const (
	sendDelivered sendState = "delivered"
	// sendQueued: the message waits in the outbox for the controller.
	sendQueued sendState = "queued"
)

// sendResult is what `agenttree send` did.
type sendResult struct {
	Issue   int       `json:"issue"`
	ID      string    `json:"id"`
	State   sendState `json:"state"`
	Session string    `json:"session"`
	// Reason says why a queued message was not delivered.
	Reason string `json:"reason,omitempty"`
}

func (a *app) sendCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "send ID MESSAGE...",
		Short: "Send a message to the agent working on an issue (people only)",
		Long: "Put MESSAGE (the words after ID, or standard input for -) in issue ID's outbox\n" +
			"and type it into the agent's tmux session at once. A message that cannot be\n" +
			"delivered now (no session yet, say) stays queued, and `agenttree controller`\n" +
			"delivers it when it can; `agenttree inbox ID` shows it meanwhile.\n\n" +
			"Exit status: 0 delivered or queued, 2 bad usage or config, 3 not a person.",
		Example: "  agenttree send 3 'the login form needs labels'\n  agenttree send 3 - < notes.txt",
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.forPeople("only a person sends messages by hand; %s cannot (the controller tells agents what they need)"); err != nil {
				return err
			}
			text, err := a.messageText(args[1:])
			if err != nil {
				return err
			}
			e, id, err := a.engineFor(args[0])
			if err != nil {
				return err
			}
			res, err := send(a.ctx, e, id, text)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(res)
			}
			if res.State == sendDelivered {
				fmt.Fprintf(a.out, "delivered to tmux session %s (message %s)\n", res.Session, res.ID)
			} else {
				fmt.Fprintf(a.out, "queued (message %s): %s\n", res.ID, safeText(res.Reason))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// messageText is the message the arguments give: the words, or standard
// input when the one argument is -.
func (a *app) messageText(args []string) (string, error) {
	text := strings.Join(args, " ")
	if text == "-" {
		data, err := io.ReadAll(a.stdin)
		if err != nil {
			return "", fmt.Errorf("read the message from standard input: %w", err)
		}
		text = string(data)
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the message is empty; write it after the issue id, or pass - and write it on standard input")
	}
	return text, nil
}

// send puts text in issue id's outbox for its agent, then delivers the
// outbox, in order, as the controller does. What cannot be delivered now
// stays queued for the controller.
func send(ctx context.Context, e *engine.Engine, id int, text string) (sendResult, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return sendResult{}, err
	}
	box := e.Outbox(id)
	m, err := box.Put(ctx, outbox.Message{To: outbox.ToAgent, Kind: "person", Text: text})
	if err != nil {
		return sendResult{}, err
	}
	session := controller.SessionName(e.Config, iss)
	res := sendResult{Issue: id, ID: m.ID, State: sendQueued, Session: session}
	delivered, err := controller.Deliver(ctx, e, iss, controller.TmuxClient(e), nil)
	if slices.ContainsFunc(delivered, func(d outbox.Message) bool { return d.ID == m.ID && d.State == outbox.Sent }) || !queued(box, m.ID) {
		res.State = sendDelivered // here, or by the controller meanwhile
		return res, nil
	}
	res.Reason = fmt.Sprintf("%s; `agenttree controller` delivers it when it can (see `agenttree inbox %d`)", notDelivered(err, session), id)
	return res, nil
}

// queued reports whether message id is still in box's queue; when the
// box cannot be read, it says so, as a message that was not delivered here.
func queued(box *outbox.Box, id string) bool {
	pending, err := box.Pending()
	return err != nil || slices.ContainsFunc(pending, func(m outbox.Message) bool { return m.ID == id })
}

// notDelivered says why a delivery did not reach the agent.
func notDelivered(err error, session string) string {
	switch {
	case err == nil:
		return "not delivered yet"
	case errors.Is(err, tmux.ErrNoSession):
		return fmt.Sprintf("no tmux session %s (the agent's) yet", session)
	case errors.Is(err, tmux.ErrPaneBusy):
		return fmt.Sprintf("the pane of tmux session %s does not take input now", session)
	case errors.Is(err, tmux.ErrNotConfirmed):
		return fmt.Sprintf("typed into tmux session %s, but Enter was not seen taken; it is pressed again at the next try, never typed twice", session)
	}
	return err.Error()
}
