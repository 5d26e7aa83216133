package sessions

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
)

// welcome is an agent's first message: who it is, where it works, and
// its stage's instructions (the stage's skill file, else what to do),
// after note when there is one.
func (m *Manager) welcome(iss *issues.Issue, rec *Record, note string) string {
	var b strings.Builder
	if note != "" {
		b.WriteString(note + "\n")
	}
	fmt.Fprintf(&b, "You are the %s agent of issue %d (%s), at stage %s. You work in %s, on branch %s; the issue's documents are in %s.",
		rec.Role, iss.ID, iss.Title, iss.Stage, rec.Worktree, rec.Branch, m.Engine.Store.Dir(iss.ID))
	b.WriteString("\n" + m.instructions(iss))
	return b.String()
}

// instructions are what the agent does at iss's stage: the engine's, but
// for a stage that is not the agent's (the controller's, a person's).
func (m *Manager) instructions(iss *issues.Issue) string {
	node, ok := m.cfg().Node(iss.Stage)
	switch {
	case !ok:
		return fmt.Sprintf("Stage %s is not in the pipeline; wait for a person.", iss.Stage)
	case node.Controller(), node.HumanReview():
		return fmt.Sprintf("The issue is at %s, which is not yours: you are told when your work is needed.", node.Path)
	}
	return m.Engine.Instructions(node, iss)
}
