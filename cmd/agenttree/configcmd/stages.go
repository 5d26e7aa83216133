package configcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/engine/machine/render"
)

type stagesReport struct {
	DefaultFlow string              `json:"default_flow"`
	Flows       map[string][]string `json:"flows"`
}

func (a cmds) stagesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "stages",
		Short:   "List each flow's stages in order",
		Example: "  agenttree stages\n  agenttree stages --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := a.LoadConfig()
			if err != nil {
				return err
			}
			if asJSON {
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
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
