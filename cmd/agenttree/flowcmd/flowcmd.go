// Package flowcmd holds the commands that move an issue: next (an agent's,
// or a person's at a controller stage), approve, and a person's resume,
// skip, abort, reject and move.
package flowcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds is one invocation, for the runs' helpers.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	list := []*cobra.Command{newCmdNext(a, nil), newCmdApprove(a, nil)}
	return append(list, manualCmds(a)...)
}
