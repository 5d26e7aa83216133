// Package statuscmd holds the commands that show where issues are and what
// each waits on: status (the table, one issue, one issue's block) and watch.
// The controller answers an agent's status with ShowOne and ShowAll.
package statuscmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
)

// cmds is one invocation, for the views' helpers.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdStatus(a, nil), newCmdWatch(a, nil)}
}

// ShowOne prints issue arg as `status ID` does; with block, as its status
// block.
func ShowOne(a *cmdutil.App, arg string, block, asJSON bool) error {
	return cmds{a}.statusOne(arg, block, asJSON)
}

// ShowAll prints every issue as `status` does, without what it adds about
// this host (the sandbox, a controller not running): that is the asker's
// to tell, not the controller's.
func ShowAll(a *cmdutil.App, e *engine.Engine, asJSON bool) error {
	rows, err := statusRows(a.Ctx, e)
	if err != nil {
		return err
	}
	if asJSON {
		return a.PrintJSON(rows)
	}
	return cmds{a}.printStatus(rows, time.Now())
}
