package controllercmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/forge/local/cirun"
)

// CIRunnerOptions is what the local forge's CI runner was started with.
type CIRunnerOptions struct {
	*cmdutil.App
	// Args are cirun's own, unparsed.
	Args []string
}

// newCmdCIRunner is the local forge's CI runner: the forge starts this
// executable again with it, detached, to run one CI attempt. People never
// call it, so it is hidden. cirun writes its arguments and reads them
// back, so cobra passes them on unparsed.
func newCmdCIRunner(a *cmdutil.App, runF func(context.Context, *CIRunnerOptions) error) *cobra.Command {
	opts := &CIRunnerOptions{App: a}
	return &cobra.Command{
		Use:                cirun.Command + " [flags] -- COMMAND",
		Short:              "Run one local CI attempt (started by the local forge)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return ciRunnerRun(cmd.Context(), opts)
		},
	}
}

func ciRunnerRun(ctx context.Context, opts *CIRunnerOptions) error {
	if code := cirun.Main(ctx, opts.Args, opts.ErrOut); code != 0 {
		return cmdutil.SilentExit(code)
	}
	return nil
}
