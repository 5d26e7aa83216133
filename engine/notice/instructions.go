package notice

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Instructions are what whoever acts at iss's stage n does there: the
// stage's skill file, or a one-line summary; after a step back for a
// failure, what to do about the failure first. Agents are told them when
// the issue arrives, and sessions when they start.
func (b *Book) Instructions(n *stages.Node, iss *issues.Issue) string {
	stage := b.stageInstructions(n, iss)
	if SteppedBackTo(iss, n) {
		if skill := b.Skill(hooks.Class(iss.Outputs[OutClass]), iss); skill != "" {
			return skill + "\n\n" + stage
		}
	}
	return stage
}

func (b *Book) stageInstructions(n *stages.Node, iss *issues.Issue) string {
	if skill := n.Skill(); skill != "" {
		p := skill
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(b.Config.File), p)
		}
		if data, err := os.ReadFile(p); err == nil {
			return b.Fill(strings.TrimRight(string(data), "\n"), iss)
		}
	}
	switch {
	case n.HumanReview():
		return fmt.Sprintf("%s waits for a person: review issue %d, then `agenttree approve %d`.", n.Path, iss.ID, iss.ID)
	case n.Terminal() != stages.TerminalNone:
		return fmt.Sprintf("%s is the end of the flow.", n.Path)
	case n.Controller():
		return fmt.Sprintf("%s is run by the host controller (`agenttree controller`): nothing to do there; you are told if your work is needed.", n.Path)
	}
	return fmt.Sprintf("Work on %s on branch %s (issue documents in %s), then run `agenttree next`.", n.Path, iss.Branch, b.IssueDir(iss.ID))
}

// SteppedBackTo reports whether iss's last move was a step back to node.
func SteppedBackTo(iss *issues.Issue, node *stages.Node) bool {
	n := len(iss.History)
	return n > 0 && iss.History[n-1].Kind == stages.MoveStepBack && iss.History[n-1].To == node.Path
}

// LastChange names who changed iss last, for a command that lost the race
// to it.
func LastChange(iss *issues.Issue) string {
	if len(iss.History) == 0 {
		return ""
	}
	h := iss.History[len(iss.History)-1]
	return fmt.Sprintf(" (last change: %s %s → %s by the %s at %s)", h.Kind, h.From, h.To, h.Actor, h.At.Format("15:04:05"))
}
