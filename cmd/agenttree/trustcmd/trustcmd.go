// Package trustcmd holds the commands that say whether the state can be
// trusted: verify checks every issue's tamper evidence, repair restores it,
// doctor checks the deployment.
package trustcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds is one invocation, for the runs' helpers.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdVerify(a, nil), newCmdRepair(a, nil), newCmdDoctor(a, nil)}
}
