// Package flowcmd holds the commands that move an issue: next (an agent's,
// or a person's at a controller stage), approve, and a person's resume,
// skip, abort, reject and move.
package flowcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds makes the group's commands for one invocation.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	c := cmds{a}
	list := []*cobra.Command{c.nextCmd(), c.approveCmd()}
	list = append(list, c.manualCmds()...)
	return list
}
