package statuscmd

import (
	"fmt"
	"os"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
)

// settleEmpty is how long an issue's directory stays without its files
// before status calls them removed: Create writes them within a moment of
// making the directory, and Scan leaves out an issue being created.
const settleEmpty = 10 * time.Second

// emptied lists the issues whose directory is there but whose files
// (issue.yaml and its log) are not, and have not been for settleEmpty:
// they were removed outside agenttree, and status says so rather than
// leave the issue out. listed are the issues Scan read.
func emptied(e *engine.Engine, listed []issues.Listed, now time.Time) []int {
	ids, err := e.Store.IDs()
	if err != nil || len(ids) == len(listed) {
		return nil // every directory was read
	}
	read := make(map[int]bool, len(listed))
	for _, l := range listed {
		read[l.ID] = true
	}
	var out []int
	for _, id := range ids {
		if read[id] {
			continue
		}
		if st, err := os.Stat(e.Store.HostDir(id)); err == nil && now.Sub(st.ModTime()) >= settleEmpty {
			out = append(out, id)
		}
	}
	return out
}

// emptiedRow is the row of issue id, whose files were removed.
func emptiedRow(e *engine.Engine, id int) Row {
	w := waiting{who: WaiterPerson, what: fmt.Sprintf("a person: its files were removed outside agenttree (`agenttree verify %d`)", id)}
	why := fmt.Sprintf("missing: the files of its directory %s (issue.yaml, events.jsonl) were removed outside agenttree; "+
		"nothing else holds its state, so a person puts them back from a backup if one has it; its branch and PR, if it had them, are where they were",
		e.Store.HostDir(id))
	return Row{ID: id, Missing: true, Error: why, WaitingOn: w.what, WaitingFor: w.who, wait: w}
}
