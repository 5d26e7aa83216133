// Package trustcmd holds the commands that say whether the state can be
// trusted: verify checks every issue's tamper evidence, repair restores it,
// doctor checks the deployment.
package trustcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds makes the group's commands for one invocation.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	c := cmds{a}
	return []*cobra.Command{c.verifyCmd(), c.repairCmd(), c.doctorCmd()}
}
