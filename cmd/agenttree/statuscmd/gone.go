package statuscmd

import (
	"fmt"
	"os"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/sessions/waiton"
)

// settleEmpty is how long an issue's directory stays without its files
// before status calls them removed: Create writes them within a moment of
// making the directory, and Scan leaves out an issue being created.
const settleEmpty = 10 * time.Second

// emptied lists the issues whose directory is there but whose files
// (issue.yaml and its log) are not, and have not been for settleEmpty:
// they were removed outside agenttree, and status says so rather than
// leave the issue out. listed are the issues Scan read, missing those
// whose directory is gone (Store.Missing), both in id order. Ids are given
// in turn and never again, so such an issue is an id between them that
// neither holds, or one past them all: a store with none costs a stat,
// not a listing of every directory.
func emptied(e *engine.Engine, listed []issues.Listed, missing []int, now time.Time) []int {
	last := 0
	if n := len(listed); n > 0 {
		last = listed[n-1].ID
	}
	if n := len(missing); n > 0 {
		last = max(last, missing[n-1])
	}
	var out []int
	settled := func(id int) (exists bool) {
		st, err := os.Stat(e.Store.HostDir(id))
		if err != nil {
			return false
		}
		if now.Sub(st.ModTime()) >= settleEmpty {
			out = append(out, id)
		}
		return true
	}
	if len(listed)+len(missing) < last { // an id between them that neither holds
		known := make(map[int]bool, len(listed)+len(missing))
		for _, l := range listed {
			known[l.ID] = true
		}
		for _, id := range missing {
			known[id] = true
		}
		for id := 1; id < last; id++ {
			if !known[id] {
				settled(id)
			}
		}
	}
	for id := last + 1; settled(id); id++ { // every directory past them
	}
	return out
}

// emptiedRow is the row of issue id, whose files were removed.
func emptiedRow(e *engine.Engine, id int) Row {
	w := waiton.Waiting{Who: WaiterPerson, What: fmt.Sprintf("a person: its files were removed outside agenttree (`agenttree verify %d`)", id)}
	why := fmt.Sprintf("missing: the files of its directory %s (issue.yaml, events.jsonl) were removed outside agenttree; "+
		"nothing else holds its state, so a person puts them back from a backup if one has it; its branch and PR, if it had them, are where they were",
		e.Store.HostDir(id))
	return Row{ID: id, Missing: true, Error: why, WaitingOn: w.What, WaitingFor: w.Who, wait: w}
}
