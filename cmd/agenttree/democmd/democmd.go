// Package democmd holds the demo: demo runs the whole pipeline in a scratch
// repository, demo-agent is the scripted agent it configures.
package democmd

import (
	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdDemo(a, nil), newCmdDemoAgent(a, nil)}
}
