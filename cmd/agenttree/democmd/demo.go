package democmd

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/democmd/demo"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// DemoOptions is what `demo` was asked.
type DemoOptions struct {
	*cmdutil.App
	// Demo are the demo's own options; the run fills in Self and Out.
	Demo demo.Options
}

func newCmdDemo(a *cmdutil.App, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{App: a}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Play the whole pipeline on this machine: real git, tmux, local forge, controller and a scripted agent",
		Long: "Play the reference pipeline, shortened, with no network and no account, with real parts only: a\n" +
			"throwaway git repository with a bare origin, the local forge running real CI, the real\n" +
			"controller as a process, and a real tmux session started by `agenttree start`, where a\n" +
			"scripted agent reads what it is told and acts. The story: the agent implements and runs\n" +
			"`next`; the controller opens the PR; CI fails and the failure is typed into the agent's\n" +
			"pane; the agent fixes it; a change on main now conflicts; the agent is told, rebases and\n" +
			"resolves; CI passes; a person approves; the PR is merged. It prints a timeline, and exits\n" +
			"non-zero if any step of the story did not happen. Needs git and tmux.",
		Example: "  agenttree demo\n  agenttree demo --fast\n  agenttree demo --keep",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Demo.Keep, "keep", false, "leave the repository and the agent's session (the controller is stopped), and say how to attach and how to start the controller again")
	cmd.Flags().BoolVar(&opts.Demo.Fast, "fast", false, "shorten every wait")
	cmd.Flags().DurationVar(&opts.Demo.Timeout, "timeout", 3*time.Minute, "give up after this long")
	return cmd
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	d := opts.Demo
	d.Self, d.Out = self, opts.Out
	if err := demo.Run(ctx, d); err != nil {
		return &cmdutil.ExitError{Code: exitcode.Blocked, Err: err}
	}
	return nil
}
