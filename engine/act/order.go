package act

import (
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// Order is a move of an issue that the stage machine does not make: a
// person's word over the pipeline, or a fact the controller saw outside
// agenttree. It need not be an edge of the flow, only stay inside it.
type Order struct {
	// Kind is the history entry's kind (resume, skip, move, ...).
	Kind stages.Move
	// Reason is kept in the history entry; it is the Result's first reason.
	Reason string
	// Target is where the order puts the issue, and the stages it passes
	// over, decided from the issue as it is under its lock. A nil node
	// (and no error) says the issue is already where the order leads:
	// nothing is written and the Result is StatusFinal. A nil Target
	// leaves the issue at its stage (a resume).
	Target func(Place) (to *stages.Node, skipped []string, err error)
	// Change is a change to the issue written in the same update as the
	// history entry (a resume clears the escalation, budgets and breaker).
	Change func(*issues.Issue)
	// Instructions, for an order that leaves the issue at its stage, say
	// who takes it up there, from the issue as written; nil or "": the
	// stage's own instructions.
	Instructions func(Place) string
	// Anywhere: the order works on an issue at a stage the config no
	// longer declares, or that left the issue's flow (Place.Node is nil).
	Anywhere bool
	// Check refuses the order, from the issue as it is under its lock
	// (a resume of an issue that waits on nothing a resume clears); nil
	// for none.
	Check func(Place) error
}

// Place is where a locked issue is.
type Place struct {
	Issue *issues.Issue
	Flow  *stages.Flow
	// Node is nil for a stage the config does not declare.
	Node *stages.Node
}
