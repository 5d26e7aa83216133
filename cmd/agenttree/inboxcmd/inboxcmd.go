// Package inboxcmd holds the commands about the messages to an issue's
// agent: inbox reads them, send delivers one. The controller answers an
// agent's inbox with Show.
package inboxcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdInbox(a, nil), newCmdSend(a, nil)}
}
