package inboxcmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/report"
)

// View is an issue's messages, for `agenttree inbox`.
type View = report.Inbox

// InboxOptions is what `inbox` was asked.
type InboxOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given (the argument, else -i), ""
	// for the one the environment or the git branch names.
	IssueArg string
	Recent   int
	JSON     bool
}

func newCmdInbox(a *cmdutil.App, runF func(context.Context, *InboxOptions) error) *cobra.Command {
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
				return runF(cmd.Context(), opts)
			}
			return inboxRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.Flags().IntVar(&opts.Recent, "recent", 10, "how many delivered messages to show")
	cmd.Flags().StringVarP(&opts.IssueArg, "issue", "i", "", "issue id, found as next finds it (default: AGENTTREE_ISSUE, then the git branch)")
	return cmd
}

func inboxRun(ctx context.Context, opts *InboxOptions) error {
	a := opts.App
	if c, err := a.Remote(); err != nil {
		return err
	} else if c != nil {
		return a.Ask(ctx, c, api.RouteInbox, api.InboxRequest{Recent: opts.Recent, JSON: opts.JSON})
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	id, err := a.ResolveIssue(ctx, opts.IssueArg, e.WorkDir)
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
	v, err := report.ReadInbox(e.Outbox(id), id, recent)
	if err != nil {
		return err
	}
	if asJSON {
		return a.PrintJSON(v)
	}
	report.Printer{Out: a.Out, ErrOut: a.ErrOut}.Inbox(v, time.Now())
	return nil
}
