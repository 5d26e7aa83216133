package eventlog

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/record"
)

// Replayed is an issue's log read whole, each line's state rebuilt.
type Replayed struct {
	// Lines are the lines that verify, Events their content.
	Lines  []chain.Line
	Events []Event
	// Last is the issue the last good line holds (nil when none does).
	Last *record.Issue
	// Problem says why the line after the good ones does not verify.
	Problem string
	// Torn: the log ends in an incomplete line, which the next Lock drops.
	Torn bool
	// Cut is where what follows the good lines starts, a line that does
	// not verify or an incomplete one; -1 when nothing does.
	Cut int64
	// Missing: there is no events.jsonl.
	Missing bool
}

// Replay reads the whole log, checks each line's hash, link, version and
// state, and rebuilds the state each holds.
func (l Log) Replay() Replayed {
	r := Replayed{Cut: -1}
	lines, err := l.Verify()
	var ce *chain.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Missing = true
		return r
	case errors.As(err, &ce) && errors.Is(ce, chain.ErrTorn):
		r.Cut, r.Torn = ce.Offset, true
	case errors.As(err, &ce):
		r.Cut, r.Problem = ce.Offset, fmt.Sprintf("%s %v", File, ce)
	case err != nil:
		r.Cut, r.Problem = 0, fmt.Sprintf("%s cannot be read: %v", File, err)
	}
	var history []record.HistoryEntry
	for i, line := range lines {
		var ev Event
		problem := ""
		if err := line.Decode(&ev); err != nil || ev.State == nil {
			problem = "is not an event"
		} else {
			problem = follows(l.ID, ev, r.Events)
		}
		var state *record.Issue
		if problem == "" {
			state = ev.after(history)
			if sum, err := stateHash(state); err != nil || sum != ev.StateHash {
				problem = "holds a state that does not match its state_hash"
			}
		}
		if problem != "" {
			r.Cut, r.Problem, r.Torn = line.Offset, fmt.Sprintf("%s line %d %s", File, i+1, problem), false
			break
		}
		r.Lines, r.Events = append(r.Lines, line), append(r.Events, ev)
		r.Last = state
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

// LastLine is the last line that verifies, zero when none does.
func (r *Replayed) LastLine() chain.Line {
	if len(r.Lines) == 0 {
		return chain.Line{}
	}
	return r.Lines[len(r.Lines)-1]
}
