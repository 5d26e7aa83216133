// Package configcmd holds the commands about a repository's config: init
// writes a starter one, validate checks it, stages and graph show its
// pipeline, schema prints its JSON Schema.
package configcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds is one invocation, for the helpers of init and validate.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdInit(a, nil), newCmdValidate(a, nil), newCmdStages(a, nil), newCmdGraph(a, nil), newCmdSchema(a, nil)}
}
