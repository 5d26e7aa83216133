// Package issuecmd holds the issue command group: issue create, list and
// show. The controller answers an agent's create and show with PrintCreated
// and Show.
package issuecmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdIssue(a)}
}
