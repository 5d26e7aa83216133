package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
)

// welcome is an agent's first message: who it is, where it works, and
// its stage's instructions (the stage's skill file, else what to do).
func (m *Manager) welcome(iss *issues.Issue, rec *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the %s agent of issue %d (%s), at stage %s. You work in %s, on branch %s; the issue's documents are in %s.",
		rec.Role, iss.ID, iss.Title, iss.Stage, rec.Worktree, rec.Branch, m.Engine.Store.Dir(iss.ID))
	b.WriteString("\n" + m.instructions(iss))
	return b.String()
}

// instructions are what the agent does at iss's stage. The engine words
// them for its own messages but does not export them; this is the same
// rule (the stage's skill file, else one line) until it does.
func (m *Manager) instructions(iss *issues.Issue) string {
	node, ok := m.cfg().Node(iss.Stage)
	switch {
	case !ok:
		return fmt.Sprintf("Stage %s is not in the pipeline; wait for a person.", iss.Stage)
	case node.Controller(), node.HumanReview():
		return fmt.Sprintf("The issue is at %s, which is not yours: you are told when your work is needed.", node.Path)
	}
	if skill := node.Skill(); skill != "" {
		if !filepath.IsAbs(skill) {
			skill = filepath.Join(filepath.Dir(m.cfg().File), skill)
		}
		if data, err := os.ReadFile(skill); err == nil {
			return strings.TrimRight(string(data), "\n")
		}
	}
	return fmt.Sprintf("Work on %s, commit, then run `agenttree next`.", node.Path)
}
