package statedir

import "path/filepath"

// AgentSessions holds the records of agents' tmux sessions, one per
// issue: what `agenttree start` made, for `agents`, `stop` and the
// controller that keeps them alive. Host-only, like the tokens beside it.
func (l Layout) AgentSessions() string { return filepath.Join(l.Host(), "agents") }

// AgentToken is the file that hands issue id's agent its session token:
// readable by the agent's OS user alone, so that the token is in no
// process's argv or environment (docs/SECURITY.md).
func (l Layout) AgentToken(id int) string {
	return filepath.Join(l.AgentSessions(), dirName(id)+".token")
}

// AgentSession is the record of issue id's agent session.
func (l Layout) AgentSession(id int) string {
	return filepath.Join(l.AgentSessions(), dirName(id)+".yaml")
}
