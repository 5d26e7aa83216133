package engine

import (
	"errors"
	"fmt"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/engine/prhead"
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

// said is what hooks had to say along a step: notes for the agent and
// warnings. Steps return it; the command's Result gathers it.
type said struct {
	notes, warnings []string
	// send are messages hooks asked to send the agent (send_message).
	send []string
	// escalations are hooks (or spent budgets) that called a person.
	escalations []escalation
}

// escalation is a call for a person, with the failure that spent a budget
// or opened the breaker (it counts, as a step back would have).
type escalation struct {
	issues.Escalation
	failure *policy.Failure
}

func (s *said) hook(notes, warnings []string) {
	s.notes = append(s.notes, notes...)
	s.warnings = append(s.warnings, warnings...)
}

func (s *said) escalate(node *stages.Node, kind issues.EscalationKind, reason string, f *policy.Failure) {
	e := escalation{Escalation: issues.Escalation{Kind: kind, Reason: reason}, failure: f}
	if node != nil {
		e.Stage = node.Path
	}
	s.escalations = append(s.escalations, e)
}

// add keeps what o said as well.
func (s *said) add(o said) {
	s.hook(o.notes, o.warnings)
	s.send = append(s.send, o.send...)
	s.escalations = append(s.escalations, o.escalations...)
}

func (s *said) warn(w ...string) { s.warnings = append(s.warnings, w...) }

// into adds what was said to the Result's notes and warnings.
func (s said) into(r *Result) {
	r.Notes = append(r.Notes, s.notes...)
	r.Warnings = append(r.Warnings, s.warnings...)
}

// findings are what one command's steps found, in the order they ran. The
// Result is made of them once, by result.
type findings struct {
	// issue is the issue as last read or written.
	issue *issues.Issue
	// approval is what a person's approval said: recorded on the forge,
	// or made again at a stage whose entry hooks refused unapproved
	// commits.
	approval said
	// unfinished names the stage whose entry hooks a dry run did not rerun.
	unfinished string
	// resumed is the rerun of entry hooks that had not finished.
	resumed *arrival
	// final says why the issue goes nowhere from here.
	final string
	// said is what hooks run outside any move had to say.
	said said
	// scope names what the messages hooks sent are about, for their keys
	// (empty: the issue's version).
	scope string
	// wait says who moves the issue on from here.
	wait    string
	skipped []string
	journey *journey
	// recheck is the move back through CI of a head pushed during a
	// review (prhead.Stale), made or, in a dry run, to make.
	recheck *prhead.Recheck
}

// result makes the command's Result from base (the issue as the command
// found it) and what its steps found.
func (f findings) result(r Result, dryRun bool) Result {
	f.approval.into(&r)
	f.said.into(&r)
	if f.resumed != nil {
		f.resumed.said.into(&r)
	}
	if f.issue != nil {
		r.Version = f.issue.Version
	}
	r.Skipped = f.skipped
	switch {
	case f.recheck != nil && f.journey == nil:
		// A dry run: what approving would do instead.
		r.Status, r.To, r.Kind = StatusSteppedBack, f.recheck.To.Path, stages.MoveManual
		r.Reasons = append(r.Reasons, f.recheck.Reason)
	case f.unfinished != "":
		r.Status = StatusBlocked
		r.Reasons = append(r.Reasons, fmt.Sprintf("the entry hooks of %s did not finish; `agenttree next` runs them again", f.unfinished))
	case f.journey != nil:
		f.journey.into(&r, dryRun)
	case f.resumed != nil && len(f.resumed.failures) > 0:
		r.Status = StatusBlocked
		r.Reasons = append(r.Reasons, f.resumed.failures...)
	case f.resumed != nil && f.resumed.waiting != nil:
		r.Status, r.Outcome.RetryAfter, r.Class = StatusWaiting, f.resumed.waiting.RetryAfter, f.resumed.waiting.Class
		r.Reasons = append(r.Reasons, f.resumed.waiting.Reason)
	case f.resumed != nil && f.resumed.instructions != "" && f.final == "" && f.wait == "":
		r.Status, r.Instructions = StatusWaiting, f.resumed.instructions
	case f.wait != "":
		r.Status = StatusWaiting
		r.Reasons = append(r.Reasons, f.wait)
	default:
		r.Status = StatusFinal
		r.Reasons = append(r.Reasons, f.final)
	}
	if f.recheck != nil && (r.Status == StatusAdvanced || r.Status == StatusWaiting || r.Status == StatusSteppedBack) {
		// Not approved: the issue went back through CI (exit status 1).
		r.Status, r.StepBack = StatusSteppedBack, &StepBack{From: f.recheck.From.Path, To: f.recheck.To.Path, Reason: f.recheck.Reason}
		if f.recheck.Todo != "" {
			r.Instructions = f.recheck.Todo
		}
	}
	r.Reasons = dedupe(r.Reasons)
	return r
}

func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
