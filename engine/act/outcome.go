package act

import (
	"fmt"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
)

// Outcome is what a command left for the controller to act on, beside
// the people's report (the Result's reasons, notes and instructions): the
// controller decides from it, never from the report's text.
type Outcome struct {
	Status Status
	// From is the stage the command found the issue at, To where it left
	// it (or, when no move was written, where it was going).
	From, To string
	// Moved: the command left the issue at another stage, to go on
	// there (not blocked, not waiting).
	Moved bool
	// Version is the issue's version as the command left it; Conflict:
	// another process changed the issue first.
	Version  int
	Conflict bool
	// RetryAfter is when to look at a waiting issue again; 0: nothing
	// the controller waits out.
	RetryAfter time.Duration
	// Class is the kind of failure or wait of the hook that decided
	// (rate_limit, forge_error, ...).
	Class hooks.Class
	// Failure is the kind of failure a step back was for, and Checks the
	// failing checks of a CI failure (Status StatusSteppedBack).
	Failure hooks.Class
	Checks  []string
	// Escalation is the call for a person (Status StatusEscalated).
	Escalation *issues.Escalation
	// Summary says in one line what happened; Reason is the first reason
	// the issue stands where it does ("" when none was given).
	Summary, Reason string
	// Notes are what hooks did (a PR opened, a branch rebased).
	Notes []string
}

// Finish fills r's Outcome from what the command found, once its
// report is complete: every command that returns a Result ends here.
func Finish(r *Result, err error) (*Result, error) {
	if r == nil {
		return r, err
	}
	o := &r.Outcome
	o.Status, o.From, o.To, o.Version, o.Conflict, o.Class, o.Notes = r.Status, r.From, r.To, r.Version, r.Conflict, r.Class, r.Notes
	// A retried request (StatusDone) reports the move it made before:
	// nothing moved this time.
	o.Moved = r.From != r.To && r.Status != StatusBlocked && r.Status != StatusWaiting && r.Status != StatusDone
	if len(r.Reasons) > 0 {
		o.Reason = r.Reasons[0]
	}
	if r.Status == StatusSteppedBack && r.StepBack != nil {
		o.Failure, o.Checks = hooks.Class(r.StepBack.Class), r.StepBack.Checks
	}
	if r.Status == StatusEscalated {
		o.Escalation = r.Escalated
	}
	o.Summary = summary(r, o)
	return r, err
}

// summary is the one line of what r says happened.
func summary(r *Result, o *Outcome) string {
	switch {
	case r.Status == StatusSteppedBack && r.StepBack != nil:
		return fmt.Sprintf("stepped back %s → %s: %s", r.StepBack.From, r.StepBack.To, r.StepBack.Reason)
	case o.Escalation != nil:
		return "escalated: " + o.Escalation.Reason
	case r.Status == StatusDone:
		return fmt.Sprintf("already done before: %s → %s", r.From, r.To)
	case o.Moved:
		return fmt.Sprintf("moved %s → %s", r.From, r.To)
	case o.Reason != "":
		return o.Reason
	}
	return string(r.Status)
}
