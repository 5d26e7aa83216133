package forge

import (
	"fmt"
	"strings"
)

// TamperedError is a record the forge keeps (the local forge's PR records
// and CI results) that is not the version agenttree last wrote: written,
// changed or removed outside agenttree. It is ErrTampered. agenttree does
// not use the record: it is no verdict for or against the code, and
// trying again changes nothing, so the issue whose work meets it stops
// for a person (docs/SECURITY.md, "Tamper evidence").
type TamperedError struct {
	// Record names the record for people: "local PR #3", "local CI of
	// 1a2b3c4d5e6f".
	Record string
	// Path is the record's file.
	Path string
	// Why says how it differs: "it has no log", "it was removed", "its
	// content is not the last version its log holds".
	Why string
	// Changes say, field by field, how it differs from the version
	// agenttree last wrote ("state: failure → success", "approvals
	// added"), when that version is known.
	Changes []string
	// Fix says what a person does about it.
	Fix string
	// Err says how it was found: the record is not the version its log
	// holds last, or it has no log (a *chain.ChangedError).
	Err error
}

// maxChangesShown bounds the changes a message lists.
const maxChangesShown = 6

func (e *TamperedError) Error() string {
	return fmt.Sprintf("%s: its record was changed outside agenttree, which does not use it (%v): %v%s; %s",
		e.Record, ErrTampered, e.Err, e.changes(), e.Fix)
}

func (e *TamperedError) Unwrap() error { return e.Err }

// Is makes a TamperedError ErrTampered.
func (e *TamperedError) Is(target error) bool { return target == ErrTampered }

// changes is " (a; b; 2 more)", or "" when none are known.
func (e *TamperedError) changes() string {
	n := len(e.Changes)
	if n == 0 {
		return ""
	}
	shown := e.Changes[:min(n, maxChangesShown)]
	more := ""
	if n > len(shown) {
		more = fmt.Sprintf("; %d more", n-len(shown))
	}
	return " (" + strings.Join(shown, "; ") + more + ")"
}

// Escalation is why issue id, whose work met the record, stops for a
// person: which record, what changed, and the ways out.
func (e *TamperedError) Escalation(id int) string {
	return fmt.Sprintf("%s: its record was changed outside agenttree: %s%s; it is %s. agenttree does not use it: it is no verdict on the code, and no work for the agent. "+
		"A person looks at it (`agenttree verify` checks every record), then: %s; and lets the issue go on with `agenttree resume %d --reason TEXT` "+
		"(or takes it elsewhere: `agenttree move %d STAGE --reason TEXT`, `agenttree abort %d --reason TEXT`)",
		e.Record, e.Why, e.changes(), e.Path, e.Fix, id, id, id)
}
