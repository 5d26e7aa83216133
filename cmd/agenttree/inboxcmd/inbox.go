package inboxcmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// View is an issue's messages, for `agenttree inbox`.
type View struct {
	Issue int `json:"issue"`
	// Undelivered are the messages waiting for their recipient, oldest
	// first; Recent the latest delivered ones.
	Undelivered []outbox.Message `json:"undelivered"`
	Recent      []outbox.Message `json:"recent"`
}

func (a cmds) inboxCmd() *cobra.Command {
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
		Args:    cmdutil.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c, err := a.Remote(); err != nil {
				return err
			} else if c != nil {
				return a.Ask(c, api.RouteInbox, api.InboxRequest{Recent: recent, JSON: asJSON})
			}
			e, err := a.Engine()
			if err != nil {
				return err
			}
			arg := idFlag
			if len(args) == 1 {
				arg = args[0]
			}
			id, err := a.ResolveIssue(arg, e.WorkDir)
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

func (a cmds) showInbox(e *engine.Engine, id, recent int, asJSON bool) error {
	if _, err := e.Store.Get(id); err != nil {
		return err
	}
	v, err := readInbox(e.Outbox(id), id, recent)
	if err != nil {
		return err
	}
	if asJSON {
		return a.PrintJSON(v)
	}
	printInbox(a.Out, v, time.Now())
	return nil
}

func readInbox(box *outbox.Box, id, recent int) (View, error) {
	v := View{Issue: id, Undelivered: []outbox.Message{}, Recent: []outbox.Message{}}
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

func printInbox(w io.Writer, v View, now time.Time) {
	if len(v.Undelivered)+len(v.Recent) == 0 {
		fmt.Fprintf(w, "issue %d: no messages\n", v.Issue)
		return
	}
	fmt.Fprintf(w, "issue %d: %d undelivered, %d delivered lately\n", v.Issue, len(v.Undelivered), len(v.Recent))
	if len(v.Undelivered) > 0 {
		fmt.Fprintln(w, "undelivered:")
	}
	for _, m := range v.Undelivered {
		head := fmt.Sprintf("  %s, to the %s, queued %s ago", m.State, m.To, cmdutil.Age(now.Sub(m.Created)))
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
	fmt.Fprintln(w, head[:len(head)-len(body)]+cmdutil.SafeText(body))
	for _, l := range strings.Split(strings.TrimRight(textsafe.Sanitize(m.Text), "\n"), "\n") {
		fmt.Fprintln(w, "    "+l)
	}
}
