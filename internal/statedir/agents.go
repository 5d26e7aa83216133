package statedir

import "path/filepath"

// AgentSessions holds the records of agents' tmux sessions, one per
// issue: what `agenttree start` made, for `agents`, `stop` and the
// controller that keeps them alive. Host-only, like the tokens beside it.
func (l Layout) AgentSessions() string { return filepath.Join(l.Host(), "agents") }

// AgentSession is the record of issue id's agent session.
func (l Layout) AgentSession(id int) string {
	return filepath.Join(l.AgentSessions(), dirName(id)+".yaml")
}
