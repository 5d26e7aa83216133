package configcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/machine/render"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// GraphOptions is what `graph` was asked.
type GraphOptions struct {
	*cmdutil.App
	// Format is mermaid or dot; Flow the flow to draw, "" the default.
	Format, Flow string
}

func newCmdGraph(a *cmdutil.App, runF func(context.Context, *GraphOptions) error) *cobra.Command {
	opts := &GraphOptions{App: a}
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
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return graphRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", string(render.Mermaid), "mermaid or dot")
	cmd.Flags().StringVar(&opts.Flow, "flow", "", "flow to draw (default: the default flow)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{string(render.Mermaid), string(render.Dot)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func graphRun(ctx context.Context, opts *GraphOptions) error {
	cfg, reg, err := opts.LoadConfig()
	if err != nil {
		return err
	}
	flow, err := cfg.Flow(opts.Flow)
	if err != nil {
		return err
	}
	out, err := render.Draw(machine.New(flow, reg), render.Format(opts.Format))
	if err != nil {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	fmt.Fprint(opts.Out, out)
	return nil
}
