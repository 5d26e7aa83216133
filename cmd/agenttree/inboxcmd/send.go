package inboxcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/sessions/tmux"
)

// SendState is where `agenttree send` left its message.
type SendState string

const (
	SendDelivered SendState = "delivered"
	// SendQueued: the message waits in the outbox for the controller.
	SendQueued SendState = "queued"
)

// SendResult is what `agenttree send` did.
type SendResult struct {
	Issue   int       `json:"issue"`
	ID      string    `json:"id"`
	State   SendState `json:"state"`
	Session string    `json:"session"`
	// Reason says why a queued message was not delivered.
	Reason string `json:"reason,omitempty"`
}

// SendOptions is what `send` was asked.
type SendOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given; Words the message's, "-" alone
	// for standard input.
	IssueArg string
	Words    []string
	JSON     bool
}

func newCmdSend(a *cmdutil.App, runF func(context.Context, *SendOptions) error) *cobra.Command {
	opts := &SendOptions{App: a}
	cmd := &cobra.Command{
		Use:   "send ID MESSAGE...",
		Short: "Send a message to the agent working on an issue (people only)",
		Long: "Put MESSAGE (the words after ID, or standard input for -) in issue ID's outbox\n" +
			"and type it into the agent's tmux session at once. A message that cannot be\n" +
			"delivered now (no session yet, say) stays queued, and `agenttree controller`\n" +
			"delivers it when it can; `agenttree inbox ID` shows it meanwhile.\n\n" +
			cmdutil.ExitStatus("0 delivered or queued, "+cmdutil.ExitUsageOrConfig+", "+cmdutil.ExitNotPerson),
		Example: "  agenttree send 3 'the login form needs labels'\n  agenttree send 3 - < notes.txt",
		Args:    cmdutil.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg, opts.Words = args[0], args[1:]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return sendRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func sendRun(ctx context.Context, opts *SendOptions) error {
	a := opts.App
	if err := a.ForPeople("only a person sends messages by hand; %s cannot (the controller tells agents what they need)"); err != nil {
		return err
	}
	text, err := messageText(a.In, opts.Words)
	if err != nil {
		return err
	}
	e, id, err := a.EngineFor(ctx, opts.IssueArg)
	if err != nil {
		return err
	}
	res, err := send(ctx, e, id, text)
	if err != nil {
		return err
	}
	if opts.JSON {
		return a.PrintJSON(res)
	}
	if res.State == SendDelivered {
		fmt.Fprintf(a.Out, "delivered to tmux session %s (message %s)\n", res.Session, res.ID)
	} else {
		fmt.Fprintf(a.Out, "queued (message %s): %s\n", res.ID, cmdutil.SafeText(res.Reason))
	}
	return nil
}

// messageText is the message the words give, or standard input when the
// one word is -.
func messageText(in io.Reader, words []string) (string, error) {
	text := strings.Join(words, " ")
	if text == "-" {
		data, err := io.ReadAll(in)
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
func send(ctx context.Context, e *engine.Engine, id int, text string) (SendResult, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return SendResult{}, err
	}
	box := e.Outbox(id)
	m, err := box.Put(ctx, outbox.Message{To: outbox.ToAgent, Kind: "person", Text: text})
	if err != nil {
		return SendResult{}, err
	}
	session := delivery.SessionName(e.Config, iss)
	res := SendResult{Issue: id, ID: m.ID, State: SendQueued, Session: session}
	delivered, err := delivery.Deliver(ctx, e, iss, delivery.TmuxClient(e), nil, nil)
	if slices.ContainsFunc(delivered, func(d outbox.Message) bool { return d.ID == m.ID && d.State == outbox.Sent }) || !Queued(box, m.ID) {
		res.State = SendDelivered // here, or by the controller meanwhile
		return res, nil
	}
	res.Reason = fmt.Sprintf("%s; `agenttree controller` delivers it when it can (see `agenttree inbox %d`)", NotDelivered(err, session), id)
	return res, nil
}

// Queued reports whether message id is still in box's queue; when the
// box cannot be read, it says so, as a message that was not delivered here.
func Queued(box *outbox.Box, id string) bool {
	pending, err := box.Pending()
	return err != nil || slices.ContainsFunc(pending, func(m outbox.Message) bool { return m.ID == id })
}

// NotDelivered says why a delivery did not reach the agent.
func NotDelivered(err error, session string) string {
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
