package main

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/forge/local/cirun"
)

// ciRunnerCmd is the local forge's CI runner: the forge starts this
// executable again with it, detached, to run one CI attempt. People never
// call it, so it is hidden. cirun writes its arguments and reads them
// back, so cobra passes them on unparsed.
func (a *app) ciRunnerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                cirun.Command + " [flags] -- COMMAND",
		Short:              "Run one local CI attempt (started by the local forge)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := cirun.Main(a.ctx, args, a.err); code != 0 {
				return silentExit(code)
			}
			return nil
		},
	}
}
