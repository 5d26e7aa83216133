// Package statuscmd holds the commands that show where issues are and what
// each waits on: status (the table, one issue, one issue's block) and watch.
// The controller answers an agent's status with AnswerOf, which the
// agent's status prints.
package statuscmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds is one invocation, for the views' helpers.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdStatus(a, nil), newCmdWatch(a, nil)}
}
