package hooks

import (
	"context"
	"fmt"

	"github.com/agenttree/agenttree/stages"
)

func stepBack(_ context.Context, c *Call) Outcome {
	to := c.Params.String("to", "")
	msg := c.Params.String("message", "")
	if msg == "" {
		msg = fmt.Sprintf("stepped back from %s to %s", c.Issue.Stage, to)
	}
	return StepBack(to, stages.Render(msg, c.Issue.MessageVars()))
}

// rollback sends the issue back to `to` until max_rollbacks rollbacks there
// are spent (0: no limit); past the budget the loop is not converging and
// the hook blocks, so a person decides.
func rollback(_ context.Context, c *Call) Outcome {
	to := c.Params.String("to", "")
	limit := c.Params.Int("max_rollbacks", 0)
	done := 0
	for _, e := range c.Issue.History {
		if e.Kind == string(KindRollback) && e.To == to {
			done++
		}
	}
	if limit > 0 && done >= limit {
		return Failf("rollback to %s has already happened %s (max_rollbacks: %d); the loop is not converging, so a human should decide: "+
			"look at the work, then move the issue on with `agenttree next` as a human, or change the stage documents or the config",
			to, plural(done, "time", "times"), limit)
	}
	if limit > 0 {
		return Rollback(to, fmt.Sprintf("rollback %d of %d to %s", done+1, limit, to))
	}
	return Rollback(to, fmt.Sprintf("rollback %d to %s", done+1, to))
}
