// Command linked is every package agenttree's command groups link,
// initialised, and nothing run: what any agenttree command pays before
// its first line.
package main

import (
	_ "github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	_ "github.com/agenttree/agenttree/cmd/agenttree/configcmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/controllercmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/democmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/flowcmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/inboxcmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/issuecmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/sessioncmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	_ "github.com/agenttree/agenttree/cmd/agenttree/trustcmd"
)

func main() {}
