package configcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/machine/render"
	"github.com/agenttree/agenttree/internal/exitcode"
)

func (a cmds) graphCmd() *cobra.Command {
	var format, flowName string
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Draw a flow's stage machine (every legal move) as Mermaid or Graphviz dot",
		Long: `Draw a flow's stage machine: every move the config allows between its
stages. Controller stages and human reviews are marked (filled); advances
and approvals are solid arrows, step backs, redirects and rollbacks dashed.
The Mermaid output can be pasted into a GitHub comment in a mermaid code
block; the dot output is for Graphviz.`,
		Example: `  agenttree graph
  agenttree graph --flow quick
  agenttree graph --format dot | dot -Tsvg > pipeline.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, reg, err := a.LoadConfig()
			if err != nil {
				return err
			}
			flow, err := cfg.Flow(flowName)
			if err != nil {
				return err
			}
			out, err := render.Draw(machine.New(flow, reg), render.Format(format))
			if err != nil {
				return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
			}
			fmt.Fprint(a.Out, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", string(render.Mermaid), "mermaid or dot")
	cmd.Flags().StringVar(&flowName, "flow", "", "flow to draw (default: the default flow)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{string(render.Mermaid), string(render.Dot)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
