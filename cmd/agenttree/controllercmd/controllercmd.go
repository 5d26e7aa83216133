// Package controllercmd holds the host controller's commands: controller
// (its loop, and the socket on which it answers agents' requests as the
// other groups' commands would), pr wait, and the local forge's hidden CI
// runner.
package controllercmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds is one invocation, for the runs' helpers.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdController(a, nil), newCmdNode(a, nil), newCmdPR(a), newCmdCIRunner(a, nil)}
}
