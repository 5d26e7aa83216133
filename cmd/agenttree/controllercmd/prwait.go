package controllercmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/exitcode"
)

func newCmdPR(a *cmdutil.App) *cobra.Command {
	cmd := &cobra.Command{Use: "pr", Short: "Work with an issue's pull request"}
	cmd.AddCommand(newCmdPRWait(a, nil))
	return cmd
}

// PRWaitOptions is what `pr wait` was asked.
type PRWaitOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id, or its PR's URL, as given; "" with PR.
	IssueArg string
	// PR is the PR's number (--pr), 0 for none.
	PR int
	// Interval is the longest pause between polls, 0 for the config's.
	Interval time.Duration
	JSON     bool
}

func newCmdPRWait(a *cmdutil.App, runF func(context.Context, *PRWaitOptions) error) *cobra.Command {
	opts := &PRWaitOptions{App: a}
	cmd := &cobra.Command{
		Use:   "wait ID",
		Short: "Poll an issue's PR until its CI is done (for use without a controller)",
		Example: `  agenttree pr wait 3
  agenttree pr wait --pr 45
  agenttree pr wait https://github.com/octo/app/pull/45
  agenttree pr wait 3 --interval 30s --json`,
		Long: "Poll an issue's PR until its CI is done, printing each phase.\n\n" +
			"Name the issue by its id (3, or #3 as every command takes it), or by its PR: --pr 45,\n" +
			"or the PR's URL. A number alone is always an issue id, never a PR number. A PR that\n" +
			"several issues had is the one of the issue not yet done or dropped; if that leaves more\n" +
			"than one, name the issue.\n\n" +
			cmdutil.ExitStatus("0 CI passed, 1 CI failed (ci_feedback.md is written in the issue's directory)",
				cmdutil.ExitUsage+", 3 stopped after 5 errors in a row talking to the forge (no CI verdict)",
				"4 timed out (ci_polling.timeout_s or the stage's wait_for_ci timeout)") + "\n" +
			"--json prints the outcome with the polls made (iterations) and the time waited (elapsed_s).",
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("pr") {
				if len(args) > 0 {
					return fmt.Errorf("name the issue or its PR, not both: `agenttree pr wait --pr %d` or `agenttree pr wait %s`", opts.PR, args[0])
				}
				return nil
			}
			return cmdutil.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.IssueArg = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return prWaitRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Interval, "interval", 0, "longest pause between polls (default: as the config's ci_polling says)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	cmd.Flags().IntVar(&opts.PR, "pr", 0, "the PR's number instead of the issue's id")
	return cmd
}

// prWaitRun waits for the CI of the PR of the issue named (or of the
// issue whose PR is opts.PR, or the PR's URL), printing each phase, and
// exits as the outcome says.
func prWaitRun(ctx context.Context, opts *PRWaitOptions) error {
	a := cmds{opts.App}
	e, id, err := a.waitTarget(ctx, opts.IssueArg, opts.PR)
	if err != nil {
		return err
	}
	out, err := controller.WaitCI(ctx, e, id, opts.Interval, func(p controller.WaitPhase) {
		if !opts.JSON {
			fmt.Fprintf(a.Out, "[%d] %s elapsed: %s; next poll in %s\n", p.Iteration, roundDuration(p.Elapsed), p.Status, roundDuration(p.Next))
		}
	})
	var fe *controller.ForgeErrorsError
	switch {
	case errors.Is(err, context.Canceled):
		return &cmdutil.ExitError{Code: exitcode.Interrupted, Err: errors.New("interrupted; CI goes on, and `agenttree pr wait` picks up where this stopped")}
	case errors.As(err, &fe):
		return &cmdutil.ExitError{Code: exitcode.Waiting, Err: err}
	case err != nil:
		return err
	}
	if opts.JSON {
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
