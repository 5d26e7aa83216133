// Package inboxcmd holds the commands about the messages to an issue's
// agent: inbox reads them, send delivers one. The controller answers an
// agent's inbox with Show.
package inboxcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
)

// cmds makes the group's commands for one invocation.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	c := cmds{a}
	return []*cobra.Command{c.inboxCmd(), c.sendCmd()}
}

// Show prints issue id's inbox as `inbox` does: what waits for its agent,
// then the recent messages delivered.
func Show(a *cmdutil.App, e *engine.Engine, id, recent int, asJSON bool) error {
	return cmds{a}.showInbox(e, id, recent, asJSON)
}
