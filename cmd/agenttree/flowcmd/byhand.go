package flowcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/stages"
)

// byHandExit is the exit status of people's commands, for their help.
var byHandExit = cmdutil.ExitStatus("0 done, 1 moved but the new stage's entry work did not finish",
	cmdutil.ExitUsageOrConfig+", "+cmdutil.ExitOnlyPerson+" (or another process has the issue)")

// manualCmds are people's commands: the ways out of an escalation
// (resume, skip, abort) and a person's word over the pipeline (reject,
// move). Agents and the controller are refused (exit 3).
func manualCmds(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdResume(a, nil), newCmdSkip(a, nil), newCmdAbort(a, nil), newCmdReject(a, nil), newCmdMove(a, nil)}
}

// ByHandOptions is what resume, skip and abort were asked.
type ByHandOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given.
	IssueArg string
	// Reason is kept in the issue's history.
	Reason string
	JSON   bool
}

func newCmdResume(a *cmdutil.App, runF func(context.Context, *ByHandOptions) error) *cobra.Command {
	opts := &ByHandOptions{App: a}
	cmd := &cobra.Command{
		Use:     "resume ID --reason TEXT",
		Short:   "Let an escalated issue go on: reset its retry budgets and circuit breaker (people only)",
		Example: `  agenttree resume 3 --reason "CI runner fixed"`,
		Long: "Clear issue ID's escalation, retry budgets and circuit breaker, so the controller\n" +
			"(or the next `agenttree next`) tries its stage again. The reason (what was put\n" +
			"right) is kept in the issue's history. An issue that is not escalated and whose\n" +
			"breaker is closed is refused (exit 2): `agenttree status ID` says what it waits on.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
		RunE: byHandRunE(opts, runF, resumeRun),
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "what was put right, for the issue's history (required)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func resumeRun(ctx context.Context, opts *ByHandOptions) error {
	return byHand(ctx, opts.App, opts.IssueArg, opts.JSON, func(e *engine.Engine, id int, actor engine.Actor) (*engine.Result, error) {
		return people.Resume(ctx, e, id, actor, opts.Reason)
	})
}

func newCmdSkip(a *cmdutil.App, runF func(context.Context, *ByHandOptions) error) *cobra.Command {
	opts := &ByHandOptions{App: a}
	cmd := &cobra.Command{
		Use:     "skip ID --reason TEXT",
		Short:   "Move an issue past its stage without the stage's gates (people only)",
		Example: `  agenttree skip 3 --reason "docs-only change, no review needed"`,
		Long: "Move issue ID to the stage `agenttree next` would choose, without checking the\n" +
			"current stage's gates. The reason is kept in the issue's history.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
		RunE: byHandRunE(opts, runF, skipRun),
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why the stage is skipped, for the issue's history (required)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func skipRun(ctx context.Context, opts *ByHandOptions) error {
	return byHand(ctx, opts.App, opts.IssueArg, opts.JSON, func(e *engine.Engine, id int, actor engine.Actor) (*engine.Result, error) {
		return people.Skip(ctx, e, id, actor, opts.Reason)
	})
}

func newCmdAbort(a *cmdutil.App, runF func(context.Context, *ByHandOptions) error) *cobra.Command {
	opts := &ByHandOptions{App: a}
	cmd := &cobra.Command{
		Use:     "abort ID --reason TEXT",
		Short:   "Abandon an issue: move it to its flow's abandon stage (people only)",
		Example: `  agenttree abort 3 --reason "duplicate of 2"`,
		Long: "Move issue ID to the stage of its flow declared `terminal: abandon`, and run\n" +
			"that stage's entry hooks. The reason is kept in the issue's history.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
		RunE: byHandRunE(opts, runF, abortRun),
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why it is abandoned, for the issue's history (required)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func abortRun(ctx context.Context, opts *ByHandOptions) error {
	return byHand(ctx, opts.App, opts.IssueArg, opts.JSON, func(e *engine.Engine, id int, actor engine.Actor) (*engine.Result, error) {
		return people.Abort(ctx, e, id, actor, opts.Reason)
	})
}

// RejectOptions is what `reject` was asked.
type RejectOptions struct {
	*cmdutil.App
	IssueArg string
	// To is the stage the work goes back to, "" for the review's own.
	To, Message string
	JSON        bool
}

func newCmdReject(a *cmdutil.App, runF func(context.Context, *RejectOptions) error) *cobra.Command {
	opts := &RejectOptions{App: a}
	cmd := &cobra.Command{
		Use:   "reject ID --message TEXT [--to STAGE]",
		Short: "Send work at a human review back to an earlier stage, with a message for the agent (people only)",
		Example: `  agenttree reject 3 --message "the form needs labels"
  agenttree reject 3 --message "start over from the plan" --to plan`,
		Long: "Send issue ID, waiting at a human review, back to --to (default: the review's\n" +
			"on_failure.step_back_to, else the nearest earlier stage where an agent works).\n" +
			"The message is kept in the issue's history and delivered to the agent.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return rejectRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Message, "message", "", "what the agent must change (required)")
	cmd.Flags().StringVar(&opts.To, "to", "", "the stage the work goes back to")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func rejectRun(ctx context.Context, opts *RejectOptions) error {
	return byHand(ctx, opts.App, opts.IssueArg, opts.JSON, func(e *engine.Engine, id int, actor engine.Actor) (*engine.Result, error) {
		return people.Reject(ctx, e, id, actor, opts.To, opts.Message)
	})
}

// MoveOptions is what `move` was asked.
type MoveOptions struct {
	*cmdutil.App
	IssueArg, Stage string
	Reason          string
	JSON            bool
}

func newCmdMove(a *cmdutil.App, runF func(context.Context, *MoveOptions) error) *cobra.Command {
	opts := &MoveOptions{App: a}
	cmd := &cobra.Command{
		Use:     "move ID STAGE --reason TEXT",
		Short:   "Put an issue at any stage of its flow (people only)",
		Example: `  agenttree move 3 implement.code --reason "reopened: the fix was incomplete"`,
		Long: "Move issue ID to STAGE, any stage of its flow, without gates, and run the\n" +
			"stage's entry hooks. The reason is kept in the issue's history.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg, opts.Stage = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return moveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why, for the issue's history (required)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func moveRun(ctx context.Context, opts *MoveOptions) error {
	return byHand(ctx, opts.App, opts.IssueArg, opts.JSON, func(e *engine.Engine, id int, actor engine.Actor) (*engine.Result, error) {
		return people.Move(ctx, e, id, actor, opts.Stage, opts.Reason)
	})
}

// byHandRunE is the RunE of resume, skip and abort: runF when a test
// gave one, else run.
func byHandRunE(opts *ByHandOptions, runF, run func(context.Context, *ByHandOptions) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		opts.IssueArg = args[0]
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return run(cmd.Context(), opts)
	}
}

// byHand runs do, one of people's commands, on the issue arg names, as
// whoever runs it, and reports the result as `next` does.
func byHand(ctx context.Context, a *cmdutil.App, arg string, asJSON bool, do func(e *engine.Engine, id int, actor engine.Actor) (*engine.Result, error)) error {
	e, id, actor, err := a.EngineActing(ctx, arg)
	if err != nil {
		return err
	}
	res, err := do(e, id, actor)
	if err != nil {
		return err
	}
	if res.Status == engine.StatusAdvanced && res.Kind == stages.MoveResume && !asJSON {
		printResumed(a, res)
		return nil
	}
	return a.Report(res, asJSON)
}

// printResumed says that an issue goes on where it is: a resume is no
// move, and "moved pr_ready → pr_ready" would say one happened.
func printResumed(a *cmdutil.App, res *engine.Result) {
	fmt.Fprintf(a.Out, "issue %d resumed at %s\n", res.Issue, res.From)
	a.Lines("  ", res.Reasons)
	if res.Instructions != "" {
		fmt.Fprintln(a.Out)
		fmt.Fprintln(a.Out, res.Instructions)
	}
}
