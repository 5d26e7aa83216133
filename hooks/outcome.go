// Package hooks is the hook runtime: the registry, the outcome a hook
// returns, typed parameters whose defaults live in the spec, the call a
// hook gets, what it may use of the world (Env) and the read-only issue
// snapshot it reads. A hook never writes issue state; the engine
// interprets outcomes. The built-in hooks live in the packages below this
// one and are assembled by hooks/builtin.
package hooks

import (
	"fmt"
	"time"
)

// Kind is what a hook's outcome asks of the engine.
type Kind string

const (
	KindPass     Kind = "pass"
	KindFail     Kind = "fail"
	KindPending  Kind = "pending"
	KindStepBack Kind = "step_back"
	KindRedirect Kind = "redirect"
	KindRollback Kind = "rollback"
	KindEscalate Kind = "escalate"
	// KindSkipped is a hook whose `when` condition was false.
	KindSkipped Kind = "skipped"
)

// Class classifies a failure. The controller keeps a retry budget per
// class, so a conflict or a GitHub outage never spends the CI budget.
type Class string

const (
	ClassGeneral   Class = "general"
	ClassTimeout   Class = "timeout"
	ClassAuth      Class = "auth"
	ClassRateLimit Class = "rate_limit"
	// ClassConfig is a failure of setup (no forge, no remote): a person
	// fixes it.
	ClassConfig Class = "config"
	// ClassForge is an error talking to the forge: never a CI verdict.
	ClassForge Class = "forge_error"

	ClassCIFailed       Class = "ci_failed"
	ClassNoNewCI        Class = "no_new_ci"
	ClassPollingTimeout Class = "polling_timeout"
	// ClassCICancelled: CI's run was cancelled or timed out on the CI
	// service: no verdict on the code, as no_new_ci and polling_timeout.
	ClassCICancelled Class = "ci_cancelled"
	// ClassCIEnvironment: CI failed for its environment (a runner lost,
	// a download refused, a full disk), not its code: no verdict on the
	// code either.
	ClassCIEnvironment Class = "ci_environment"
	ClassConflict      Class = "conflict"
	// ClassUnverifiedHead: the PR's head is not the commit a person
	// approved or CI passed (merge_pr refused it). A person decides; the
	// agent cannot make a person approve, so it is never sent back to it.
	ClassUnverifiedHead Class = "unverified_head"
	// ClassTampered: a record agenttree keeps (a forge's PR record or CI
	// result) was changed outside agenttree. It is no verdict on the
	// code: the issue stops for a person (an escalation), never sent
	// back to the agent.
	ClassTampered Class = "tampered"
)

// Outcome is the result of one hook call.
type Outcome struct {
	Kind   Kind
	Reason string
	// Target is the node a step back, redirect or rollback goes to.
	Target     string
	Message    string
	RetryAfter time.Duration
	// Class classifies a failure; empty for anything but a failure or a
	// pending that waits something out.
	Class   Class
	Outputs map[string]string
	// Warnings are printed but do not block (an optional hook's failure).
	Warnings []string
	// Watch updates the hook's private state, kept across calls in the
	// issue's watch.yaml (an empty value deletes a key). Hooks that poll
	// remember there what they saw, so a restarted controller picks up.
	Watch map[string]string
	// Send are messages for the agent (send_message): the engine
	// puts them in the outbox, and the controller delivers them.
	Send []string
	// Files are stage documents to write into the issue directory (name
	// relative to it → content), such as ci_feedback.md.
	Files map[string]string
}

// WatchResumedAt is the watch key the engine sets (RFC 3339) when a
// person resumes an issue that stopped for them: hooks that wait for
// something outside (CI) take it as a request to try once more.
const WatchResumedAt = "resumed_at"

// Pass is a successful check.
func Pass() Outcome { return Outcome{Kind: KindPass} }

// Failf is a blocking failure of ClassGeneral; the reason says what is
// wrong and what to do.
func Failf(format string, args ...any) Outcome {
	return FailAs(ClassGeneral, format, args...)
}

// FailAs is a blocking failure of class.
func FailAs(class Class, format string, args ...any) Outcome {
	return Outcome{Kind: KindFail, Reason: fmt.Sprintf(format, args...), Class: class}
}

// Pending asks to be called again after d.
func Pending(d time.Duration, reason string) Outcome {
	return Outcome{Kind: KindPending, RetryAfter: d, Reason: reason}
}

// Redirect sends the issue to target instead of blocking it.
func Redirect(target, reason string) Outcome {
	return Outcome{Kind: KindRedirect, Target: target, Reason: reason}
}

// Rollback sends the issue back to an earlier node after a completion.
func Rollback(target, reason string) Outcome {
	return Outcome{Kind: KindRollback, Target: target, Reason: reason}
}

// StepBack returns the issue to target with a message for the agent.
func StepBack(target, message string) Outcome {
	return Outcome{Kind: KindStepBack, Target: target, Message: message, Reason: message}
}

// Escalate calls a human.
func Escalate(reason string) Outcome { return Outcome{Kind: KindEscalate, Reason: reason} }

// Blocking reports whether the outcome stops a transition.
func (o Outcome) Blocking() bool {
	return o.Kind == KindFail || o.Kind == KindPending || o.Kind == KindEscalate
}

// AgentFixable reports whether the failure is one an agent can act on. Bad
// credentials, outages, rate limits, a forge that is not set up and a head
// no person approved are not: stepping the issue back to the agent for
// them would only send it in circles.
func (o Outcome) AgentFixable() bool {
	switch o.Class {
	case ClassAuth, ClassRateLimit, ClassConfig, ClassForge, ClassUnverifiedHead, ClassTampered:
		return false
	}
	return true
}

// transient reports whether a failure may go away by itself.
func (o Outcome) transient() bool {
	return o.Kind == KindFail && (o.Class == ClassTimeout || o.Class == ClassRateLimit)
}
