package controllercmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/cli/cmdutil"
	"github.com/agenttree/agenttree/internal/exitcode"
)

func (a cmds) prCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "pr", Short: "Work with an issue's pull request"}
	cmd.AddCommand(a.prWaitCmd())
	return cmd
}

func (a cmds) prWaitCmd() *cobra.Command {
	var interval time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "wait ID",
		Short: "Poll an issue's PR until its CI is done (for use without a controller)",
		Example: `  agenttree pr wait 3
  agenttree pr wait 3 --interval 30s --json`,
		Long: "Poll an issue's PR until its CI is done, printing each phase.\n\n" +
			"Exit status: 0 CI passed, 1 CI failed (ci_feedback.md is written in the issue's directory),\n" +
			"2 bad usage, 4 timed out (ci_polling.timeout_s or the stage's wait_for_ci timeout).",
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.prWait(args[0], interval, asJSON)
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", 0, "longest pause between polls (default: as the config's ci_polling says)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	return cmd
}

// prWait waits for the CI of issue arg's PR, printing each phase, and
// exits as the outcome says.
func (a cmds) prWait(arg string, interval time.Duration, asJSON bool) error {
	e, id, err := a.EngineFor(arg)
	if err != nil {
		return err
	}
	out, err := controller.WaitCI(a.Ctx, e, id, interval, func(p controller.WaitPhase) {
		if !asJSON {
			fmt.Fprintf(a.Out, "[%d] %s elapsed: %s; next poll in %s\n", p.Iteration, roundDuration(p.Elapsed), p.Status, roundDuration(p.Next))
		}
	})
	if errors.Is(err, context.Canceled) {
		return &cmdutil.ExitError{Code: exitcode.Interrupted, Err: errors.New("interrupted; CI goes on, and `agenttree pr wait` picks up where this stopped")}
	}
	if err != nil {
		return err
	}
	if asJSON {
		if err := a.PrintJSON(out); err != nil {
			return err
		}
	} else {
		a.printWait(out, id)
	}
	switch {
	case out.Passed:
		return nil
	case out.TimedOut:
		return cmdutil.SilentExit(exitcode.Timeout)
	}
	return cmdutil.SilentExit(exitcode.Blocked)
}

// roundDuration keeps a duration readable: whole seconds, or milliseconds
// below a second.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// printWait says how waiting for CI ended, and what to do next.
func (a cmds) printWait(out *controller.WaitOutcome, id int) {
	switch {
	case out.Passed:
		fmt.Fprintf(a.Out, "CI passed: %s\n", out.Reason)
	case out.TimedOut:
		fmt.Fprintf(a.Out, "CI did not finish in time: %s\n", out.Reason)
	case out.Class == hooks.ClassConflict:
		fmt.Fprintf(a.Out, "the PR conflicts with its base, so CI does not count yet: %s\n", out.Reason)
	default:
		fmt.Fprintf(a.Out, "CI did not pass: %s\n", out.Reason)
	}
	if out.Feedback != "" {
		fmt.Fprintf(a.Out, "what failed, with the log: %s\nfix it, commit, `git push`, then run `agenttree pr wait %d` again\n", out.Feedback, id)
	}
}
