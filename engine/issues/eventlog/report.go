package eventlog

import (
	"fmt"

	"github.com/agenttree/agenttree/engine/issues/record"
)

// Report is what the store's Verify found of one issue; Repaired, below,
// what its Repair did.
type Report struct {
	ID int  `json:"id"`
	OK bool `json:"ok"`
	// Lines counts the lines of events.jsonl that verify; Version is the
	// version the last of them holds.
	Lines   int `json:"lines"`
	Version int `json:"version,omitempty"`
	// Problems say what is wrong: a line of the log, or issue.yaml
	// against the log.
	Problems []string `json:"problems,omitempty"`
	// Changes are how issue.yaml differs from the last state the log
	// holds, field by field.
	Changes []string `json:"changes,omitempty"`
	// Notes are worth knowing but not wrong: a write a crash interrupted
	// (finished by the next command), a chain started late.
	Notes []string `json:"notes,omitempty"`
	// Missing: the issue's directory was removed outside agenttree (the
	// store's MissingError); Problems say so.
	Missing bool `json:"missing,omitempty"`
	// Interrupted: the log's last line is a write issue.yaml does not
	// have yet; Torn: the log ends in an incomplete line. The next
	// command that locks the issue sets each right.
	Interrupted bool `json:"interrupted,omitempty"`
	Torn        bool `json:"torn,omitempty"`
}

// Check checks the whole log, every line's hash, link, version and
// state, and iss, the issue's issue.yaml read before it, against the last
// line: a write made between the two reads reads as interrupted, never
// as a mismatch. iss is nil when issue.yaml cannot be read, and problems
// say why.
func (l Log) Check(iss *record.Issue, problems []string) *Report {
	rep := &Report{ID: l.ID, Problems: problems}
	r := l.Replay()
	rep.Lines = len(r.Lines)
	if len(r.Events) > 0 {
		first, last := r.Events[0], r.Events[len(r.Events)-1]
		rep.Version = last.Version
		if first.Op != OpCreate {
			rep.Notes = append(rep.Notes, fmt.Sprintf("its chain starts at version %d (%s, %s): what came before is not covered",
				first.Version, first.Op, first.At.Format("2006-01-02 15:04")))
		}
	}
	if rep.Torn = r.Torn; r.Torn {
		rep.Notes = append(rep.Notes, "its log ends in an incomplete line (an append a crash cut short), which the next command drops")
	}
	if iss != nil {
		compare(rep, iss, &r)
	} else if r.Problem != "" {
		rep.Problems = append(rep.Problems, r.Problem)
	}
	rep.OK = len(rep.Problems) == 0
	return rep
}

// compare adds to rep how iss stands against its replayed log.
func compare(rep *Report, iss *record.Issue, r *Replayed) {
	if iss.ID != rep.ID {
		rep.Problems = append(rep.Problems, fmt.Sprintf("issue.yaml says it is issue %d", iss.ID))
	}
	if r.Problem != "" {
		rep.Problems = append(rep.Problems, r.Problem)
	}
	if r.Last == nil {
		switch {
		case iss.Chain == "" && (r.Missing || r.Problem == ""):
			rep.Problems = append(rep.Problems, "it has no chain and no events.jsonl, so whether it was changed cannot be told")
		case iss.Chain == "":
			rep.Problems = append(rep.Problems, problemPreChain)
		case r.Missing || r.Problem == "":
			rep.Problems = append(rep.Problems, "its events.jsonl is missing or empty")
		}
		return
	}
	line, ev := r.LastLine(), r.Events[len(r.Events)-1]
	if iss.Chain == line.Hash {
		if sum, err := stateHash(iss); err == nil && sum == ev.StateHash {
			return
		}
		rep.Problems = append(rep.Problems, fmt.Sprintf("issue.yaml differs from the last state its log holds (version %d, line %d)", ev.Version, line.N))
		rep.Changes = Diff(r.Last, iss)
		return
	}
	if iss.Chain == line.Prev && r.Problem == "" {
		if sum, err := stateHash(ev.after(iss.History)); err == nil && sum == ev.StateHash {
			rep.Interrupted = true
			rep.Notes = append(rep.Notes, fmt.Sprintf("the write of version %d was interrupted after it was logged; the next command finishes it", ev.Version))
			return
		}
	}
	switch {
	case iss.Chain == "":
		rep.Problems = append(rep.Problems, "issue.yaml has no chain (its chain field was removed)")
	case r.Problem == "":
		rep.Problems = append(rep.Problems, fmt.Sprintf("issue.yaml's chain does not name the last line of its log (line %d): lines were cut off the log, or issue.yaml was replaced", line.N))
	}
	rep.Changes = Diff(r.Last, iss)
}

// RepairAction says what Repair did.
type RepairAction string

const (
	// RepairNone: nothing was wrong.
	RepairNone RepairAction = "none"
	// RepairFinished: a write a crash interrupted was finished, as the
	// next command would have.
	RepairFinished RepairAction = "finished"
	// RepairRestored: issue.yaml is the last consistent state of the log
	// again.
	RepairRestored RepairAction = "restored"
	// RepairAdopted: a new chain starts from issue.yaml as it was.
	RepairAdopted RepairAction = "adopted"
)

// Repaired says what Repair did to one issue.
type Repaired struct {
	ID     int          `json:"id"`
	Action RepairAction `json:"action"`
	// Problems are what Verify found before the repair.
	Problems []string `json:"problems,omitempty"`
	// Restored is the version whose state was restored; Version the
	// version issue.yaml has now.
	Restored int `json:"restored,omitempty"`
	Version  int `json:"version,omitempty"`
	// Undone are the changes of issue.yaml the repair undid.
	Undone []string `json:"undone,omitempty"`
	// SetAside is the file the log's lines after its last good one went
	// to, SetAsideLines how many lines (or, for an adoption, the whole
	// log) went there.
	SetAside      string `json:"set_aside,omitempty"`
	SetAsideLines int    `json:"set_aside_lines,omitempty"`
}
