package configcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"

	"github.com/agenttree/agenttree/engine/machine/render"
)

type stagesReport struct {
	DefaultFlow string              `json:"default_flow"`
	Flows       map[string][]string `json:"flows"`
}

// StagesOptions is what `stages` was asked.
type StagesOptions struct {
	*cmdutil.App
	JSON bool
}

func newCmdStages(a *cmdutil.App, runF func(context.Context, *StagesOptions) error) *cobra.Command {
	opts := &StagesOptions{App: a}
	cmd := &cobra.Command{
		Use:     "stages",
		Short:   "List each flow's stages in order",
		Example: "  agenttree stages\n  agenttree stages --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return stagesRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func stagesRun(ctx context.Context, opts *StagesOptions) error {
	a := opts.App
	cfg, _, err := a.LoadConfig()
	if err != nil {
		return err
	}
	if opts.JSON {
		rep := stagesReport{DefaultFlow: cfg.DefaultFlow, Flows: map[string][]string{}}
		for _, f := range cfg.Flows {
			rep.Flows[f.Name] = f.Paths()
		}
		return a.PrintJSON(rep)
	}
	for _, f := range cfg.Flows {
		mark := ""
		if f.Name == cfg.DefaultFlow {
			mark = " (default)"
		}
		fmt.Fprintf(a.Out, "flow %s%s:\n", f.Name, mark)
		for _, n := range f.Nodes {
			fmt.Fprintf(a.Out, "  %-32s %s\n", n.Path, render.Describe(n))
		}
	}
	return nil
}
