package democmd

import (
	"context"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/democmd/demoagent"
	"github.com/agenttree/agenttree/internal/gitx"
)

// demoAgentCmd is the scripted agent `agenttree demo` configures as an
// ordinary agent command: it reads its pane and acts on what it is told.
func (a cmds) demoAgentCmd() *cobra.Command {
	var base string
	cmd := &cobra.Command{
		Use:    "demo-agent",
		Short:  "A scripted coding agent for `agenttree demo`: reads its pane, implements, fixes CI, resolves conflicts",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			agent := &demoagent.Agent{
				Repo: &gitx.Repo{Dir: a.WD},
				Base: base,
				Out:  a.Out,
				Next: func(ctx context.Context) (string, error) {
					next := exec.CommandContext(ctx, self, "next")
					next.Dir = a.WD
					out, err := next.CombinedOutput()
					return string(out), err
				},
			}
			return agent.Run(a.Ctx, a.In)
		},
	}
	cmd.Flags().StringVar(&base, "base", "main", "the branch its work goes to")
	return cmd
}
