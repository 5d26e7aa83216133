// Command linked is every package agenttree's command groups link,
// initialised, and nothing run: what any agenttree command pays before
// its first line.
package main

import (
	_ "github.com/agenttree/agenttree/internal/cli/cmdutil"
	_ "github.com/agenttree/agenttree/internal/cli/configcmd"
	_ "github.com/agenttree/agenttree/internal/cli/controllercmd"
	_ "github.com/agenttree/agenttree/internal/cli/democmd"
	_ "github.com/agenttree/agenttree/internal/cli/flowcmd"
	_ "github.com/agenttree/agenttree/internal/cli/inboxcmd"
	_ "github.com/agenttree/agenttree/internal/cli/issuecmd"
	_ "github.com/agenttree/agenttree/internal/cli/sessioncmd"
	_ "github.com/agenttree/agenttree/internal/cli/statuscmd"
	_ "github.com/agenttree/agenttree/internal/cli/trustcmd"
)

func main() {}
