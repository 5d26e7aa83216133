package act

import (
	"fmt"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// Admit says why actor may not act on node now (the command then waits),
// or an error for a command that makes no sense here. reviewed: a human
// review comes before node in its flow, so a person may approve there
// again what changed since.
func Admit(actor Actor, node *stages.Node, iss *issues.Issue, approve, reviewed bool) (string, error) {
	if iss.Escalated != nil {
		return EscalatedReason(iss), nil
	}
	if approve {
		if actor.Kind != ActorHuman {
			return fmt.Sprintf("only a person can approve; %s cannot (ask a person to run `agenttree approve %d`)", actor, iss.ID), nil
		}
		if !node.HumanReview() && (!reviewed || !EntryPendingAt(iss, node)) {
			if node.Controller() {
				// Sent back through CI, say: nothing to approve until it
				// is back at the review.
				return "", fmt.Errorf("issue %d is at %s: %w; the controller runs it (`agenttree next -i %d` runs its pass here), and a person approves once it reaches a review",
					iss.ID, node.Path, ErrNotReview, iss.ID)
			}
			return "", fmt.Errorf("issue %d is at %s: %w; use `agenttree next -i %d`", iss.ID, node.Path, ErrNotReview, iss.ID)
		}
	}
	if node.Terminal() != stages.TerminalNone {
		return "", nil // anyone may finish a terminal stage's entry work
	}
	if actor.Kind == ActorController && EntryPendingAt(iss, node) {
		return "", nil // the controller retries unfinished entry work anywhere
	}
	return WaitReason(actor, node, iss.ID), nil
}

// EscalatedReason says why an escalated issue does not move, and the ways out.
func EscalatedReason(iss *issues.Issue) string {
	return fmt.Sprintf("issue %d is escalated at %s: %s; a person resolves it: `agenttree resume %d --reason TEXT` (try again), `agenttree skip %d --reason TEXT`, `agenttree abort %d --reason TEXT`, or `agenttree move %d STAGE --reason TEXT`",
		iss.ID, iss.Escalated.Stage, iss.Escalated.Reason, iss.ID, iss.ID, iss.ID, iss.ID)
}

// EntryPendingAt reports whether iss has entry work left to do at node.
func EntryPendingAt(iss *issues.Issue, node *stages.Node) bool {
	return iss.EntryPending != nil && iss.EntryPending.Stage == node.Path
}
