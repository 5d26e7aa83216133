package democmd

import (
	"context"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"

	"github.com/agenttree/agenttree/cmd/agenttree/democmd/demoagent"
	"github.com/agenttree/agenttree/internal/gitx"
)

// DemoAgentOptions is what `demo-agent` was asked.
type DemoAgentOptions struct {
	*cmdutil.App
	// Base is the branch its work goes to.
	Base string
}

// newCmdDemoAgent is the scripted agent `agenttree demo` configures as an
// ordinary agent command: it reads its pane and acts on what it is told.
func newCmdDemoAgent(a *cmdutil.App, runF func(context.Context, *DemoAgentOptions) error) *cobra.Command {
	opts := &DemoAgentOptions{App: a}
	cmd := &cobra.Command{
		Use:    "demo-agent",
		Short:  "A scripted coding agent for `agenttree demo`: reads its pane, implements, fixes CI, resolves conflicts",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return demoAgentRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Base, "base", "main", "the branch its work goes to")
	return cmd
}

func demoAgentRun(ctx context.Context, opts *DemoAgentOptions) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	agent := &demoagent.Agent{
		Repo: &gitx.Repo{Dir: opts.WD},
		Base: opts.Base,
		Out:  opts.Out,
		Next: func(ctx context.Context) (string, error) {
			next := exec.CommandContext(ctx, self, "next")
			next.Dir = opts.WD
			out, err := next.CombinedOutput()
			return string(out), err
		},
	}
	return agent.Run(ctx, opts.In)
}
