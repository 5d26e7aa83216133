package sessions

import (
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/sessions/records"
)

// Record is what agenttree keeps of an issue's agent session.
type Record = records.Session

// Recorded is the record of issue id's agent session in e's state
// directory, if it has one that can be read.
func Recorded(e *engine.Engine, id int) (*Record, bool) {
	rec, err := records.Open(e.Store.Layout()).Get(id)
	return rec, err == nil
}
