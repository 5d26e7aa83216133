package flowcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/stages"
)

// byHandExit is the exit status of people's commands, for their help.
const byHandExit = "Exit status: 0 done, 1 moved but the new stage's entry work did not finish,\n" +
	"2 bad usage or config, 3 only a person can (or another process has the issue)."

// manualCmds are people's commands: the ways out of an escalation
// (resume, skip, abort) and a person's word over the pipeline (reject,
// move). Agents and the controller are refused (exit 3).
func (a cmds) manualCmds() []*cobra.Command {
	return []*cobra.Command{a.resumeCmd(), a.skipCmd(), a.abortCmd(), a.rejectCmd(), a.moveCmd()}
}

func (a cmds) resumeCmd() *cobra.Command {
	var reason string
	cmd := a.byHandCmd(&cobra.Command{
		Use:     "resume ID --reason TEXT",
		Short:   "Let an escalated issue go on: reset its retry budgets and circuit breaker (people only)",
		Example: `  agenttree resume 3 --reason "CI runner fixed"`,
		Long: "Clear issue ID's escalation, retry budgets and circuit breaker, so the controller\n" +
			"(or the next `agenttree next`) tries its stage again. The reason (what was put\n" +
			"right) is kept in the issue's history. An issue that is not escalated and whose\n" +
			"breaker is closed is refused (exit 2): `agenttree status ID` says what it waits on.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
	}, func(e *engine.Engine, id int, actor engine.Actor, _ []string) (*engine.Result, error) {
		return people.Resume(a.Ctx, e, id, actor, reason)
	})
	cmd.Flags().StringVar(&reason, "reason", "", "what was put right, for the issue's history (required)")
	return cmd
}

func (a cmds) skipCmd() *cobra.Command {
	var reason string
	cmd := a.byHandCmd(&cobra.Command{
		Use:     "skip ID --reason TEXT",
		Short:   "Move an issue past its stage without the stage's gates (people only)",
		Example: `  agenttree skip 3 --reason "docs-only change, no review needed"`,
		Long: "Move issue ID to the stage `agenttree next` would choose, without checking the\n" +
			"current stage's gates. The reason is kept in the issue's history.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
	}, func(e *engine.Engine, id int, actor engine.Actor, _ []string) (*engine.Result, error) {
		return people.Skip(a.Ctx, e, id, actor, reason)
	})
	cmd.Flags().StringVar(&reason, "reason", "", "why the stage is skipped, for the issue's history (required)")
	return cmd
}

func (a cmds) abortCmd() *cobra.Command {
	var reason string
	cmd := a.byHandCmd(&cobra.Command{
		Use:     "abort ID --reason TEXT",
		Short:   "Abandon an issue: move it to its flow's abandon stage (people only)",
		Example: `  agenttree abort 3 --reason "duplicate of 2"`,
		Long: "Move issue ID to the stage of its flow declared `terminal: abandon`, and run\n" +
			"that stage's entry hooks. The reason is kept in the issue's history.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
	}, func(e *engine.Engine, id int, actor engine.Actor, _ []string) (*engine.Result, error) {
		return people.Abort(a.Ctx, e, id, actor, reason)
	})
	cmd.Flags().StringVar(&reason, "reason", "", "why it is abandoned, for the issue's history (required)")
	return cmd
}

func (a cmds) rejectCmd() *cobra.Command {
	var to, message string
	cmd := a.byHandCmd(&cobra.Command{
		Use:   "reject ID --message TEXT [--to STAGE]",
		Short: "Send work at a human review back to an earlier stage, with a message for the agent (people only)",
		Example: `  agenttree reject 3 --message "the form needs labels"
  agenttree reject 3 --message "start over from the plan" --to plan`,
		Long: "Send issue ID, waiting at a human review, back to --to (default: the review's\n" +
			"on_failure.step_back_to, else the nearest earlier stage where an agent works).\n" +
			"The message is kept in the issue's history and delivered to the agent.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(1),
	}, func(e *engine.Engine, id int, actor engine.Actor, _ []string) (*engine.Result, error) {
		return people.Reject(a.Ctx, e, id, actor, to, message)
	})
	cmd.Flags().StringVar(&message, "message", "", "what the agent must change (required)")
	cmd.Flags().StringVar(&to, "to", "", "the stage the work goes back to")
	return cmd
}

func (a cmds) moveCmd() *cobra.Command {
	var reason string
	cmd := a.byHandCmd(&cobra.Command{
		Use:     "move ID STAGE --reason TEXT",
		Short:   "Put an issue at any stage of its flow (people only)",
		Example: `  agenttree move 3 implement.code --reason "reopened: the fix was incomplete"`,
		Long: "Move issue ID to STAGE, any stage of its flow, without gates, and run the\n" +
			"stage's entry hooks. The reason is kept in the issue's history.\n\n" + byHandExit,
		Args: cmdutil.ExactArgs(2),
	}, func(e *engine.Engine, id int, actor engine.Actor, args []string) (*engine.Result, error) {
		return people.Move(a.Ctx, e, id, actor, args[1], reason)
	})
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the issue's history (required)")
	return cmd
}

// byHandCmd completes cmd, one of people's commands: --json, and a run
// that calls do on the issue its first argument names, as whoever runs it,
// and reports the result as `next` does.
func (a cmds) byHandCmd(cmd *cobra.Command, do func(e *engine.Engine, id int, actor engine.Actor, args []string) (*engine.Result, error)) *cobra.Command {
	var asJSON bool
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		e, id, actor, err := a.EngineActing(args[0])
		if err != nil {
			return err
		}
		res, err := do(e, id, actor, args)
		if err != nil {
			return err
		}
		if res.Status == engine.StatusAdvanced && res.Kind == stages.MoveResume && !asJSON {
			a.printResumed(res)
			return nil
		}
		return a.Report(res, asJSON)
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// printResumed says that an issue goes on where it is: a resume is no
// move, and "moved pr_ready → pr_ready" would say one happened.
func (a cmds) printResumed(res *engine.Result) {
	fmt.Fprintf(a.Out, "issue %d resumed at %s\n", res.Issue, res.From)
	a.Lines("  ", res.Reasons)
	if res.Instructions != "" {
		fmt.Fprintln(a.Out)
		fmt.Fprintln(a.Out, res.Instructions)
	}
}
