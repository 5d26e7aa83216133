// Package record is what an issue is, as its issue.yaml and watch.yaml
// hold it, and what it is called (its slug, its branch): the types the
// store writes and everyone else reads. It stands
// apart from the store (package issues, which names these types as its
// own) so that the store's parts, the event log and the scan cache, can
// name an issue without importing the store that uses them.
package record

import (
	"fmt"
	"time"

	"github.com/agenttree/agenttree/stages"
)

// Issue is one unit of work moving through a flow. It is stored as
// _agenttree/issues/NNN/issue.yaml.
type Issue struct {
	ID       int               `yaml:"id" json:"id"`
	Slug     string            `yaml:"slug" json:"slug"`
	Title    string            `yaml:"title" json:"title"`
	Flow     string            `yaml:"flow" json:"flow"`
	Stage    string            `yaml:"stage" json:"stage"`
	Version  int               `yaml:"version" json:"version"`
	Branch   string            `yaml:"branch,omitempty" json:"branch,omitempty"`
	PRNumber int               `yaml:"pr_number,omitempty" json:"pr_number,omitempty"`
	PRURL    string            `yaml:"pr_url,omitempty" json:"pr_url,omitempty"`
	HeadSHA  string            `yaml:"head_sha,omitempty" json:"head_sha,omitempty"`
	Labels   []string          `yaml:"labels,omitempty" json:"labels,omitempty"`
	Vars     map[string]any    `yaml:"vars,omitempty" json:"vars,omitempty"`
	Outputs  map[string]string `yaml:"outputs,omitempty" json:"outputs,omitempty"`
	// EntryPending is set, in the same write as the move, when the issue
	// enters a stage with post_start hooks, and cleared once they all pass:
	// a crash or a failing hook leaves it set, and the next `next` at that
	// stage runs them again.
	EntryPending *EntryPending `yaml:"entry_pending,omitempty" json:"entry_pending,omitempty"`
	// Escalated is set when the issue stopped for a person: a budget
	// spent, the circuit breaker open, a hook that asked for one. Nothing
	// moves it until a person resumes, skips, aborts or moves it.
	Escalated *Escalation `yaml:"escalated,omitempty" json:"escalated,omitempty"`
	// Attempts counts the failures per kind (ci_failed, conflict,
	// no_new_ci, ...) that stepped the issue back or, once its budget was
	// spent, stopped it for a person.
	Attempts map[string]int `yaml:"attempts,omitempty" json:"attempts,omitempty"`
	// Breaker is the circuit breaker's state; nil is closed and unused.
	Breaker *Breaker       `yaml:"breaker,omitempty" json:"breaker,omitempty"`
	Created time.Time      `yaml:"created" json:"created"`
	Updated time.Time      `yaml:"updated" json:"updated"`
	History []HistoryEntry `yaml:"history" json:"history,omitempty"`
	// Chain is the hash of the last line of the issue's events.jsonl, the
	// line that logged this very state: a change made to issue.yaml (or
	// to the log) outside agenttree no longer matches it (see TamperedError).
	Chain string `yaml:"chain,omitempty" json:"chain,omitempty"`
}

// EntryPending names a stage whose entry hooks have not all passed.
type EntryPending struct {
	Stage string `yaml:"stage" json:"stage"`
	From  string `yaml:"from,omitempty" json:"from,omitempty"`
	// Done counts the entry hooks that have passed, in order: the
	// controller continues the sequence from there.
	Done int `yaml:"done,omitempty" json:"done,omitempty"`
	// Head is the PR's head the Done hooks passed on. Their results hold
	// for that head only: on another, the entry starts again from its
	// first hook (docs/ARCHITECTURE.md §5).
	Head string `yaml:"head,omitempty" json:"head,omitempty"`
	// Failures are what the last attempt reported.
	Failures []string `yaml:"failures,omitempty" json:"failures,omitempty"`
}

// Escalation says why an issue stopped for a person.
type Escalation struct {
	Stage string `yaml:"stage" json:"stage"`
	// Reason is one line, bounded; Detail is the full text of the
	// failure it quotes, when it quotes one.
	Reason string         `yaml:"reason" json:"reason"`
	Detail string         `yaml:"detail,omitempty" json:"detail,omitempty"`
	Kind   EscalationKind `yaml:"kind" json:"kind"`
	At     time.Time      `yaml:"at" json:"at"`
}

// EscalationKind says why an issue stopped for a person.
type EscalationKind string

const (
	// EscalatedBudget: a failure's retry budget was spent.
	EscalatedBudget EscalationKind = "budget"
	// EscalatedBreaker: the circuit breaker opened.
	EscalatedBreaker EscalationKind = "breaker"
	// EscalatedHook: a hook, or its failure policy, asked for a person.
	EscalatedHook EscalationKind = "hook"
	// EscalatedError: the forge failed again and again.
	EscalatedError EscalationKind = "error"
	// EscalatedAgent: the issue's agent cannot go on (its credentials
	// fail, it keeps dying, it stalled) and its restarts are spent.
	EscalatedAgent EscalationKind = "agent"
	// EscalatedTampered: a record agenttree keeps about the issue (its
	// PR's record or a CI result on the local forge) was changed outside
	// agenttree, and agenttree does not use it.
	EscalatedTampered EscalationKind = "tampered"
)

// Breaker states.
const (
	BreakerClosed   = "closed"
	BreakerHalfOpen = "half_open"
	BreakerOpen     = "open"
)

// Breaker is the circuit breaker of one issue: failures without
// progress, and failures in a row with the same fingerprint, counted
// since the last progress (a pass, or a new head on which less fails
// than ever since; docs/CONFIG.md, circuit_breaker).
type Breaker struct {
	State      string `yaml:"state" json:"state"`
	NoProgress int    `yaml:"no_progress" json:"no_progress"`
	SameError  int    `yaml:"same_error" json:"same_error"`
	// Fingerprint identifies the last failure: its failing check names
	// and the first lines of their failure, normalised.
	Fingerprint string `yaml:"fingerprint,omitempty" json:"fingerprint,omitempty"`
	// Failing are the checks that failed last, on Head.
	Failing []string `yaml:"failing,omitempty" json:"failing,omitempty"`
	Head    string   `yaml:"head,omitempty" json:"head,omitempty"`
	// Fewest are the failures of the failure with the fewest since the
	// last progress, each "check<TAB>normalised line": progress is less
	// than these failing, so trading one failure for another is none.
	Fewest []string `yaml:"fewest,omitempty" json:"fewest,omitempty"`
}

// KindCreate is the history kind of an issue's creation; every other entry
// records a move of the stage machine (stages.MoveAdvance, ...).
const KindCreate stages.Move = "create"

// HistoryEntry records one change of stage (or escalation).
type HistoryEntry struct {
	From string      `yaml:"from" json:"from"`
	To   string      `yaml:"to" json:"to"`
	Kind stages.Move `yaml:"kind" json:"kind"`
	// Actor is who made the change: agent, human or controller.
	Actor  string    `yaml:"actor" json:"actor"`
	Reason string    `yaml:"reason,omitempty" json:"reason"`
	At     time.Time `yaml:"at" json:"at"`
	// Request is the id of the agent's request to the controller that
	// made the change: a retry of it is answered, not applied again.
	Request string `yaml:"request,omitempty" json:"request,omitempty"`
}

// BranchName is the branch an issue's work happens on.
func BranchName(id int, slug string) string {
	return fmt.Sprintf("issue-%03d-%s", id, slug)
}
