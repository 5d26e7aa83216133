// Package move holds the hooks whose whole job is to send an issue back
// to an earlier stage: step_back (with a message for the agent) and
// rollback (after a completion, within a budget).
package move

import (
	"context"
	"fmt"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
	"github.com/agenttree/agenttree/stages"
)

var (
	stepBackTo   = hooks.StageRef("to", "the stage the issue steps back to: an earlier one, or a `redirect_only` fix stage", stages.MoveStepBack).Required()
	messageParam = hooks.Template("message",
		"what the agent is told, with {{placeholders}}; empty: \"stepped back from <stage> to <to>\"").Default("")
	rollbackTo        = hooks.StageRef("to", "the stage the issue rolls back to: an earlier one, or a `redirect_only` fix stage", stages.MoveRollback).Required()
	maxRollbacksParam = hooks.Int("max_rollbacks",
		"how many rollbacks to `to` may happen before the hook blocks for a person; 0: no limit").Default(0).AtLeast(0)
)

// Defs are the hooks that move an issue back.
func Defs() []hooks.Def {
	return []hooks.Def{
		{HookSpec: stages.HookSpec{Name: "step_back", Main: "to", Params: hooks.Specs(stepBackTo, messageParam),
			Doc:     "Sends the issue back to an earlier stage and tells its agent why.",
			Example: "- step_back: {to: implement.code, message: \"Review found problems: see review.md\"}"}, Run: stepBack},
		{HookSpec: stages.HookSpec{Name: "rollback", Main: "to", Params: hooks.Specs(rollbackTo, maxRollbacksParam),
			Doc: "Sends the issue back to an earlier stage after a stage completes, at most `max_rollbacks` times; " +
				"past that the loop is not converging and the hook blocks for a person.",
			Example: "- rollback: {to: implement.code, max_rollbacks: 2}\n  when: needs_rework"}, Run: rollback},
	}
}

func stepBack(_ context.Context, c *hooks.Call) hooks.Outcome {
	to := stepBackTo.Get(c)
	msg := messageParam.Get(c)
	if msg == "" {
		msg = fmt.Sprintf("stepped back from %s to %s", c.Issue.Stage, to)
	}
	return hooks.StepBack(to, stages.Render(msg, c.Issue.MessageVars()))
}

// rollback sends the issue back to `to` until max_rollbacks rollbacks there
// are spent (0: no limit); past the budget the loop is not converging and
// the hook blocks, so a person decides.
func rollback(_ context.Context, c *hooks.Call) hooks.Outcome {
	to := rollbackTo.Get(c)
	limit := maxRollbacksParam.Get(c)
	done := 0
	for _, e := range c.Issue.History {
		if e.Kind == stages.MoveRollback && e.To == to {
			done++
		}
	}
	switch {
	case limit > 0 && done >= limit:
		return hooks.Failf("rollback to %s has already happened %s (max_rollbacks: %d); the loop is not converging, so a human should decide: "+
			"look at the work, then move the issue on with `agenttree next` as a human, or change the stage documents or the config",
			to, phrase.Plural(done, "time", "times"), limit)
	case limit > 0:
		return hooks.Rollback(to, fmt.Sprintf("rollback %d of %d to %s", done+1, limit, to))
	}
	return hooks.Rollback(to, fmt.Sprintf("rollback %d to %s", done+1, to))
}
