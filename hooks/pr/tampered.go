package pr

import (
	"errors"
	"fmt"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
)

// tampered is the outcome of err when it says a record the forge keeps
// was changed outside agenttree (forge.ErrTampered: a CI result or an
// approval written by hand): the issue stops for a person, with which
// record, what changed and the ways out. It is no verdict on the code and
// trying again changes nothing, so it is never a failure to send back to
// the agent, and no retry budget pays for it. ok is false for any other
// error.
func tampered(c *hooks.Call, what string, err error) (o hooks.Outcome, ok bool) {
	if !errors.Is(err, forge.ErrTampered) {
		return hooks.Outcome{}, false
	}
	var te *forge.TamperedError
	reason := ""
	if errors.As(err, &te) {
		reason = fmt.Sprintf("%s: %s", what, te.Escalation(c.Issue.ID))
	} else {
		reason = fmt.Sprintf("%s: %v; a person puts it right (`agenttree verify` checks every record), then lets the issue go on with `agenttree resume %d --reason TEXT`",
			what, err, c.Issue.ID)
	}
	o = hooks.Escalate(reason)
	o.Class = hooks.ClassTampered
	return o, true
}
