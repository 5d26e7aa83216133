// Package configcmd holds the commands about a repository's config: init
// writes a starter one, validate checks it, stages and graph show its
// pipeline, schema prints its JSON Schema.
package configcmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// cmds makes the group's commands for one invocation.
type cmds struct{ *cmdutil.App }

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	c := cmds{a}
	return []*cobra.Command{c.initCmd(), c.validateCmd(), c.stagesCmd(), c.graphCmd(), c.schemaCmd()}
}
