package waiton

import (
	"fmt"

	"github.com/agenttree/agenttree/engine/issues"
)

// WayOut is one of people's commands that let an escalated issue go on.
type WayOut struct{ Usage, Does string }

// Command is the command line of w for issue id.
func (w WayOut) Command(id int) string { return "agenttree " + fmt.Sprintf(w.Usage, id) }

// WaysOut are the ways out of an escalation, in the order offered.
var WaysOut = []WayOut{
	{"resume %d --reason TEXT", "reset its budgets and breaker, and try the stage again"},
	{"skip %d --reason TEXT", "move past the stage without its gates"},
	{"abort %d --reason TEXT", "move it to its flow's abandon stage"},
	{"move %d STAGE --reason TEXT", "put it at any stage of its flow"},
}

// ResolveCommands are the ways out of issue id's escalation.
func ResolveCommands(id int) []string {
	out := make([]string, len(WaysOut))
	for i, w := range WaysOut {
		out[i] = w.Command(id)
	}
	return out
}

// HistoryText is a history entry in words.
func HistoryText(h issues.HistoryEntry) string {
	s := fmt.Sprintf("%s %s → %s", h.Kind, h.From, h.To)
	if h.From == "" || h.From == h.To {
		s = fmt.Sprintf("%s at %s", h.Kind, h.To)
	}
	if h.Reason != "" {
		s += ": " + h.Reason
	}
	return s
}
