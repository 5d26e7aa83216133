package main

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/forge/local"
)

// ciRunnerCmd is the local forge's CI runner: the forge starts this
// executable again with it, detached, to run one CI attempt. People never
// call it, so it is hidden. The forge writes its arguments and
// local.RunCI reads them, so cobra passes them on unparsed.
func (a *app) ciRunnerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                local.RunnerCommand + " [flags] -- COMMAND",
		Short:              "Run one local CI attempt (started by the local forge)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := local.RunCI(a.ctx, args, a.err); code != 0 {
				return silentExit(code)
			}
			return nil
		},
	}
}
