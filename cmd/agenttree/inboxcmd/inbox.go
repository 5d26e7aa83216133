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

// InboxOptions is what `inbox` was asked.
type InboxOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given (the argument, else -i), ""
	// for the one the environment or the git branch names.
	IssueArg string
	Recent   int
	JSON     bool
}

func newCmdInbox(a *cmdutil.App, runF func(*InboxOptions) error) *cobra.Command {
	opts := &InboxOptions{App: a}
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
			if len(args) == 1 {
				opts.IssueArg = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return inboxRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.Flags().IntVar(&opts.Recent, "recent", 10, "how many delivered messages to show")
	cmd.Flags().StringVarP(&opts.IssueArg, "issue", "i", "", "issue id, found as next finds it (default: AGENTTREE_ISSUE, then the git branch)")
	return cmd
}

func inboxRun(opts *InboxOptions) error {
	a := opts.App
	if c, err := a.Remote(); err != nil {
		return err
	} else if c != nil {
		return a.Ask(c, api.RouteInbox, api.InboxRequest{Recent: opts.Recent, JSON: opts.JSON})
	}
	e, err := a.Engine()
	if err != nil {
		return err
	}
	id, err := a.ResolveIssue(opts.IssueArg, e.WorkDir)
	if err != nil {
		return err
	}
	return Show(a, e, id, opts.Recent, opts.JSON)
}

// Show prints issue id's inbox as `inbox` does: what waits for its agent,
// then the recent messages delivered.
func Show(a *cmdutil.App, e *engine.Engine, id, recent int, asJSON bool) error {
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
