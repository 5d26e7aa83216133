package act

import (
	"errors"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Status is how a command left an issue.
type Status string

const (
	// StatusAdvanced: the issue moved (maybe with entry work unfinished).
	StatusAdvanced Status = "advanced"
	// StatusBlocked: a gate failed, or another process moved it first.
	StatusBlocked Status = "blocked"
	// StatusWaiting: a person or the controller acts next.
	StatusWaiting Status = "waiting"
	// StatusFinal: there is nowhere further to go.
	StatusFinal Status = "final"
	// StatusSteppedBack: a failure sent the issue back to an earlier stage
	// (see Result.StepBack): the work goes on there.
	StatusSteppedBack Status = "stepped_back"
	// StatusEscalated: the issue stopped for a person (see
	// Result.Escalated): a budget spent, the circuit breaker open, or a
	// hook that asked for one.
	StatusEscalated Status = "escalated"
	// StatusDone: the request was carried out before (see Result.Done);
	// nothing changed now.
	StatusDone Status = "done"
)

// Done is what a request an issue's history already records did: the
// history entry it wrote, and the stage the issue is at now.
type Done struct {
	Entry issues.HistoryEntry `json:"entry"`
	Stage string              `json:"stage"`
}

// StepBack says where a failure sent the issue, and what the agent is told.
type StepBack struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"`
	// Message is what the agent is sent (the stage's on_failure message,
	// or the failure).
	Message string `json:"message,omitempty"`
	// Feedback is the document written for the agent (ci_feedback.md).
	Feedback string `json:"feedback,omitempty"`
	// Class is the kind of failure (ci_failed, conflict, ...).
	Class string `json:"class,omitempty"`
	// Checks are the failing checks, for a CI failure.
	Checks []string `json:"checks,omitempty"`
	// Attempt counts the step backs of this kind; MaxRetries is its budget.
	Attempt    int `json:"attempt,omitempty"`
	MaxRetries int `json:"max_retries,omitempty"`
}

// Result reports one transition attempt.
type Result struct {
	Issue    int         `json:"issue"`
	From     string      `json:"from"`
	To       string      `json:"to"`
	Status   Status      `json:"status"`
	Kind     stages.Move `json:"kind,omitempty"`
	Reasons  []string    `json:"reasons"`
	Warnings []string    `json:"warnings,omitempty"`
	// Notes are what hooks had to say (a PR opened, a branch rebased),
	// for the agent's eyes.
	Notes   []string `json:"notes,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	DryRun  bool     `json:"dry_run,omitempty"`
	// Unfinished lists entry hooks of the new stage that did not pass (a
	// merge refused, a push that failed): the move stands, and the next
	// `next` at that stage runs them again.
	Unfinished []string `json:"unfinished,omitempty"`
	// StepBack is set when the command's last move was a step back.
	StepBack *StepBack `json:"step_back,omitempty"`
	// Done is set when the request (Actor.Request) was carried out
	// before, a retry of it: Status is StatusDone, and nothing changed.
	Done *Done `json:"done,omitempty"`
	// Escalated is set when the issue is stopped for a person.
	Escalated *issues.Escalation `json:"escalated,omitempty"`
	// Conflict is set when another process changed the issue first.
	Conflict bool `json:"conflict,omitempty"`
	// Review is set when From is a human review, which a person leaves
	// by approving or rejecting.
	Review       bool   `json:"review,omitempty"`
	Version      int    `json:"version"`
	Instructions string `json:"instructions,omitempty"`
	// Class is the kind of failure or wait (ci_failed, forge_error,
	// rate_limit, ...) of the hook that decided, when one did.
	Class hooks.Class `json:"class,omitempty"`
	// Outcome is what the controller acts on (when to look again, among
	// the rest), apart from this report.
	Outcome Outcome `json:"-"`
}

// ErrNotReview is returned when approve is used outside a human review.
var ErrNotReview = errors.New("not at a human review stage")
