// Package issues keeps issues on disk, under a state directory
// (statedir.Layout): issue.yaml (the issue, its stage, version and
// history), events.jsonl (every write of issue.yaml, as a hash chain whose
// last hash issue.yaml carries: see TamperedError), watch.yaml (what
// polling hooks remember) and the stage documents. Every write is atomic
// and made under the issue's file lock, with a compare-and-swap on its
// version. The engine is the only writer; everyone else reads.
//
// Its parts live below it: the issue's types in record, the event log's
// format and checks in eventlog, the scan cache in scancache. The names
// below keep the types and checks as this package's own, for its callers.
package issues

import (
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/issues/record"
)

// The issue, as record defines it.
type (
	Issue          = record.Issue
	EntryPending   = record.EntryPending
	Escalation     = record.Escalation
	EscalationKind = record.EscalationKind
	Breaker        = record.Breaker
	HistoryEntry   = record.HistoryEntry
	WatchFile      = record.WatchFile
	Poll           = record.Poll
	Action         = record.Action
	Checks         = record.Checks
)

// Why an issue stopped for a person (record.EscalationKind).
const (
	EscalatedBudget   = record.EscalatedBudget
	EscalatedBreaker  = record.EscalatedBreaker
	EscalatedHook     = record.EscalatedHook
	EscalatedError    = record.EscalatedError
	EscalatedAgent    = record.EscalatedAgent
	EscalatedTampered = record.EscalatedTampered
)

// Breaker states, the history kind of a creation, and the bound of the
// actions log (record).
const (
	BreakerClosed   = record.BreakerClosed
	BreakerHalfOpen = record.BreakerHalfOpen
	BreakerOpen     = record.BreakerOpen
	KindCreate      = record.KindCreate
	MaxActions      = record.MaxActions
)

// BranchName is the branch an issue's work happens on.
func BranchName(id int, slug string) string { return record.BranchName(id, slug) }

// Slugify makes a branch- and path-safe slug from a title (record.Slugify).
func Slugify(title string) string { return record.Slugify(title) }

// What the event log finds (eventlog): an issue changed or removed
// outside agenttree, and Verify's report of one issue.
type (
	TamperedError = eventlog.TamperedError
	MissingError  = eventlog.MissingError
	Report        = eventlog.Report
)

// What Repair did to one issue (eventlog).
type (
	RepairAction = eventlog.RepairAction
	Repaired     = eventlog.Repaired
)

// What Repair can do (eventlog.RepairAction).
const (
	RepairNone     = eventlog.RepairNone
	RepairFinished = eventlog.RepairFinished
	RepairRestored = eventlog.RepairRestored
	RepairAdopted  = eventlog.RepairAdopted
)
