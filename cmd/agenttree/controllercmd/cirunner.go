package controllercmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/forge/local/cirun"
)

// ciRunnerCmd is the local forge's CI runner: the forge starts this
// executable again with it, detached, to run one CI attempt. People never
// call it, so it is hidden. cirun writes its arguments and reads them
// back, so cobra passes them on unparsed.
func (a cmds) ciRunnerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                cirun.Command + " [flags] -- COMMAND",
		Short:              "Run one local CI attempt (started by the local forge)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := cirun.Main(a.Ctx, args, a.ErrOut); code != 0 {
				return cmdutil.SilentExit(code)
			}
			return nil
		},
	}
}
