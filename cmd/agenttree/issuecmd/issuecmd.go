// Package issuecmd holds the issue command group: issue create, list and
// show. An agent's create and show are the controller's to answer
// (controller/api); its CLI prints the answers with engine/report, as
// these commands print theirs.
package issuecmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdIssue(a)}
}
