package issues

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/agenttree/agenttree/chain"
)

// Report is what Verify found of one issue.
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
	// Missing: the issue's directory was removed outside agenttree
	// (MissingError); Problems say so.
	Missing bool `json:"missing,omitempty"`
	// Interrupted: the log's last line is a write issue.yaml does not
	// have yet; Torn: the log ends in an incomplete line. The next
	// command that locks the issue sets each right.
	Interrupted bool `json:"interrupted,omitempty"`
	Torn        bool `json:"torn,omitempty"`
}

// replayed is an issue's log read whole, each line's state rebuilt.
type replayed struct {
	// lines are the lines that verify, events their content.
	lines  []chain.Line
	events []Event
	// last is the issue the last good line holds, before the one the
	// line before it holds (nil for the first).
	last, before *Issue
	// problem says why the line after the good ones does not verify.
	problem string
	// torn: the log ends in an incomplete line, which the next Lock drops.
	torn bool
	// cut is where what follows the good lines starts, a line that does
	// not verify or an incomplete one; -1 when nothing does.
	cut int64
	// missing: there is no events.jsonl.
	missing bool
}

// replay reads issue id's whole log, checks each line's hash, link,
// version and state, and rebuilds the state each holds.
func (s *Store) replay(id int) replayed {
	r := replayed{cut: -1}
	lines, err := s.events(id).Verify()
	var ce *chain.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.missing = true
		return r
	case errors.As(err, &ce) && errors.Is(ce, chain.ErrTorn):
		r.cut, r.torn = ce.Offset, true
	case errors.As(err, &ce):
		r.cut, r.problem = ce.Offset, fmt.Sprintf("%s %v", eventsFile, ce)
	case err != nil:
		r.cut, r.problem = 0, fmt.Sprintf("%s cannot be read: %v", eventsFile, err)
	}
	var history []HistoryEntry
	for i, l := range lines {
		var ev Event
		problem := ""
		if err := l.Decode(&ev); err != nil || ev.State == nil {
			problem = "is not an event"
		} else {
			problem = follows(id, ev, r.events)
		}
		var state *Issue
		if problem == "" {
			state = ev.after(history)
			if sum, err := stateHash(state); err != nil || sum != ev.StateHash {
				problem = "holds a state that does not match its state_hash"
			}
		}
		if problem != "" {
			r.cut, r.problem, r.torn = l.Offset, fmt.Sprintf("%s line %d %s", eventsFile, i+1, problem), false
			break
		}
		r.lines, r.events = append(r.lines, l), append(r.events, ev)
		r.before, r.last = r.last, state
		history = state.History
	}
	return r
}

// follows says why ev cannot come after the events before it in issue
// id's log, "" when it can.
func follows(id int, ev Event, before []Event) string {
	switch {
	case ev.Issue != id:
		return fmt.Sprintf("is an event of issue %d", ev.Issue)
	case len(before) == 0 && !ev.Op.startsChain():
		return fmt.Sprintf("is a %s, but a log starts with a create, migrate or adopt", ev.Op)
	case len(before) > 0 && ev.Op.startsChain():
		return fmt.Sprintf("is a %s in the middle of the log", ev.Op)
	}
	if len(before) == 0 {
		return ""
	}
	prev := before[len(before)-1].Version
	switch ev.Op {
	case OpUpdate:
		if ev.Version != prev+1 {
			return fmt.Sprintf("holds version %d after version %d", ev.Version, prev)
		}
	case OpRepair:
		if ev.Version <= prev {
			return fmt.Sprintf("holds version %d after version %d", ev.Version, prev)
		}
	default:
		return fmt.Sprintf("has an unknown op %q", ev.Op)
	}
	return ""
}

// lastLine is the last line that verifies, zero when none does.
func (r *replayed) lastLine() chain.Line {
	if len(r.lines) == 0 {
		return chain.Line{}
	}
	return r.lines[len(r.lines)-1]
}

// Verify checks issue id's whole log, every line's hash, link, version
// and state, and its issue.yaml against the last line. It reads issue.yaml
// before the log, so a write made meanwhile reads as interrupted, never
// as a mismatch. It takes no lock and changes nothing. An issue whose
// directory is gone is reported missing (MissingError); an id not given
// yet is not found.
func (s *Store) Verify(id int) (*Report, error) {
	if gone, err := s.gone(id); err != nil {
		return nil, err
	} else if gone {
		return s.verifyMissing(id)
	}
	rep := &Report{ID: id}
	path := s.path(id)
	data, err := os.ReadFile(path)
	var iss *Issue
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rep.Problems = append(rep.Problems, "issue.yaml is missing")
	case err != nil:
		return nil, err
	default:
		if iss, err = decode(path, data); err != nil {
			rep.Problems = append(rep.Problems, "issue.yaml cannot be read: "+err.Error())
		}
	}
	r := s.replay(id)
	rep.Lines = len(r.lines)
	if len(r.events) > 0 {
		first, last := r.events[0], r.events[len(r.events)-1]
		rep.Version = last.Version
		if first.Op != OpCreate {
			rep.Notes = append(rep.Notes, fmt.Sprintf("its chain starts at version %d (%s, %s): what came before is not covered",
				first.Version, first.Op, first.At.Format("2006-01-02 15:04")))
		}
	}
	if rep.Torn = r.torn; r.torn {
		rep.Notes = append(rep.Notes, "its log ends in an incomplete line (an append a crash cut short), which the next command drops")
	}
	if iss != nil {
		s.compare(rep, iss, &r)
	} else if r.problem != "" {
		rep.Problems = append(rep.Problems, r.problem)
	}
	rep.OK = len(rep.Problems) == 0
	return rep, nil
}

// compare adds to rep how iss stands against its replayed log.
func (s *Store) compare(rep *Report, iss *Issue, r *replayed) {
	if iss.ID != rep.ID {
		rep.Problems = append(rep.Problems, fmt.Sprintf("issue.yaml says it is issue %d", iss.ID))
	}
	if r.problem != "" {
		rep.Problems = append(rep.Problems, r.problem)
	}
	if r.last == nil {
		switch {
		case iss.Chain == "" && (r.missing || r.problem == ""):
			rep.Problems = append(rep.Problems, "it has no chain and no events.jsonl, so whether it was changed cannot be told")
		case iss.Chain == "":
			rep.Problems = append(rep.Problems, problemPreChain)
		case r.missing || r.problem == "":
			rep.Problems = append(rep.Problems, "its events.jsonl is missing or empty")
		}
		return
	}
	line, ev := r.lastLine(), r.events[len(r.events)-1]
	if iss.Chain == line.Hash {
		if sum, err := stateHash(iss); err == nil && sum == ev.StateHash {
			return
		}
		rep.Problems = append(rep.Problems, fmt.Sprintf("issue.yaml differs from the last state its log holds (version %d, line %d)", ev.Version, line.N))
		rep.Changes = diff(r.last, iss)
		return
	}
	if iss.Chain == line.Prev && r.problem == "" {
		if sum, err := stateHash(ev.after(iss.History)); err == nil && sum == ev.StateHash {
			rep.Interrupted = true
			rep.Notes = append(rep.Notes, fmt.Sprintf("the write of version %d was interrupted after it was logged; the next command finishes it", ev.Version))
			return
		}
	}
	switch {
	case iss.Chain == "":
		rep.Problems = append(rep.Problems, "issue.yaml has no chain (its chain field was removed)")
	case r.problem == "":
		rep.Problems = append(rep.Problems, fmt.Sprintf("issue.yaml's chain does not name the last line of its log (line %d): lines were cut off the log, or issue.yaml was replaced", line.N))
	}
	rep.Changes = diff(r.last, iss)
}
