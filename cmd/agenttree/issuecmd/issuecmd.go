// Package issuecmd holds the issue command group: issue create, list and
// show. The controller answers an agent's create and show with PrintCreated
// and Show.
package issuecmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
)

// cmds makes the group's commands for one invocation.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	c := cmds{a}
	return []*cobra.Command{c.issueCmd()}
}

// PrintCreated prints a new issue as `issue create` does.
func PrintCreated(a *cmdutil.App, iss *issues.Issue, asJSON bool) error {
	return cmds{a}.printCreated(iss, asJSON)
}

// Show prints issue id as `issue show` does.
func Show(a *cmdutil.App, e *engine.Engine, id int, asJSON bool) error {
	return cmds{a}.showIssue(e, id, asJSON)
}

// PrintIssue prints iss as `issue show` does: the status views start
// with it.
func PrintIssue(a *cmdutil.App, e *engine.Engine, iss *issues.Issue) { cmds{a}.printIssue(e, iss) }
