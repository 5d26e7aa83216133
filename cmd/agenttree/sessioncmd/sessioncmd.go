// Package sessioncmd holds the commands about agents' tmux sessions: start,
// attach, stop, agents, clean, and token (a session's credential).
package sessioncmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds makes the group's commands for one invocation.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	c := cmds{a}
	list := []*cobra.Command{c.cleanCmd(), c.tokenCmd()}
	list = append(list, c.sessionCmds()...)
	return list
}
