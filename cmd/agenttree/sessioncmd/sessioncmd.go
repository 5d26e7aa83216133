// Package sessioncmd holds the commands about agents' tmux sessions: start,
// attach, stop, agents, clean, and token (a session's credential).
package sessioncmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds is one invocation, for the runs' helpers.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return append([]*cobra.Command{newCmdClean(a, nil), newCmdToken(a, nil)}, sessionCmds(a)...)
}
