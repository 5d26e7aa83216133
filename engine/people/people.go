// Package people holds people's commands: the ways out of an escalation
// (resume, skip, abort) and a person's word over the pipeline (reject,
// move). They are not edges of the stage machine (a person overrides it):
// a move only has to stay inside the issue's flow. Only a person may give
// them; an agent or the controller is told who can.
package people

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// Resume lets an issue go on after an escalation: it clears the
// escalation, the retry budgets used and the circuit breaker, so the
// controller (or the next `agenttree next`) tries the stage again. The
// reason (what was put right) is kept in the history.
func Resume(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, reason string) (*engine.Result, error) {
	return run(ctx, e, id, actor, command{
		what: "resume an issue", usage: fmt.Sprintf("agenttree resume %d --reason TEXT", id),
		needs: "a reason (--reason: what was put right), kept in the issue's history",
		Order: engine.Order{Kind: stages.MoveResume, Reason: strings.TrimSpace(reason),
			Check:        resumable,
			Change:       func(i *issues.Issue) { i.Escalated, i.Attempts, i.Breaker = nil, nil, nil },
			Instructions: afterResume},
	})
}

// resumable refuses a resume of an issue that is not escalated and whose
// circuit breaker is closed: it waits on an agent, the controller or a
// review, none of which a resume changes, and a resume that says it
// did something would hide that.
func resumable(p engine.Place) error {
	iss := p.Issue
	if iss.Escalated != nil || (iss.Breaker != nil && iss.Breaker.State != "" && iss.Breaker.State != issues.BreakerClosed) {
		return nil
	}
	return fmt.Errorf("issue %d is not escalated and its circuit breaker is closed, so there is nothing to resume; it is at %s: `agenttree status %d` says what it waits on",
		iss.ID, iss.Stage, iss.ID)
}

// Skip moves the issue past its stage without the stage's gates, to the
// stage `next` would choose. The reason is kept in the history.
func Skip(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, reason string) (*engine.Result, error) {
	return run(ctx, e, id, actor, command{
		what: "skip a stage", usage: fmt.Sprintf("agenttree skip %d --reason TEXT", id),
		needs: "a reason (--reason), kept in the issue's history",
		Order: engine.Order{Kind: stages.MoveSkip, Reason: strings.TrimSpace(reason),
			Target: func(p engine.Place) (*stages.Node, []string, error) { return skipTarget(e, p) }},
	})
}

// Abort sends the issue to its flow's abandon stage (`terminal: abandon`).
// The reason is kept in the history.
func Abort(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, reason string) (*engine.Result, error) {
	return run(ctx, e, id, actor, command{
		what: "abort an issue", usage: fmt.Sprintf("agenttree abort %d --reason TEXT", id),
		needs: "a reason (--reason), kept in the issue's history",
		Order: engine.Order{Kind: stages.MoveAbort, Reason: strings.TrimSpace(reason),
			Target: abandonTarget},
	})
}

// Reject sends work at a human review back to an earlier stage of the
// issue's flow: to, else the review's on_failure.step_back_to, else the
// nearest earlier stage where an agent works. The message is the history
// entry's reason, which the agent is sent.
func Reject(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, to, message string) (*engine.Result, error) {
	return run(ctx, e, id, actor, command{
		what: "reject work at a review", usage: fmt.Sprintf("agenttree reject %d --message TEXT", id),
		needs: "a message for the agent (--message)",
		Order: engine.Order{Kind: stages.MoveReject, Reason: strings.TrimSpace(message),
			Target: func(p engine.Place) (*stages.Node, []string, error) { return rejectTarget(e, p, to) }},
	})
}

// Move puts the issue at any stage of its flow, even from a stage the
// config no longer declares. The reason is kept in the history.
func Move(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, stage, reason string) (*engine.Result, error) {
	return run(ctx, e, id, actor, command{
		what: "move an issue by hand", usage: fmt.Sprintf("agenttree move %d %s --reason TEXT", id, stage),
		needs: "a reason (--reason), kept in the issue's history",
		Order: engine.Order{Kind: stages.MoveManual, Reason: strings.TrimSpace(reason), Anywhere: true,
			Target: func(p engine.Place) (*stages.Node, []string, error) { return moveTarget(e, p, stage) }},
	})
}

// command is one of people's commands: the order it gives the engine,
// and what a refusal or a missing reason says of it. Each overrides the
// pipeline, so each says why, for the issue's history.
type command struct {
	engine.Order
	// what and usage say, in a refusal, what only a person may do and
	// the command a person runs.
	what, usage string
	// needs says what the command must be given when its reason is empty.
	needs string
}

// run gives c's order for a person; it refuses anyone else.
func run(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, c command) (*engine.Result, error) {
	if c.Reason == "" {
		return nil, fmt.Errorf("%s needs %s: `%s`", c.Kind, c.needs, c.usage)
	}
	if actor.Kind != engine.ActorHuman {
		return act.Finish(refuse(e, id, actor, c))
	}
	return e.Override(ctx, id, actor, c.Order)
}

// refuse tells actor, who is not a person, who can give the command.
func refuse(e *engine.Engine, id int, actor engine.Actor, c command) (*engine.Result, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	return &engine.Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Status: engine.StatusWaiting,
		Reasons: []string{fmt.Sprintf("only a person can %s; %s cannot (ask a person to run `%s`)", c.what, actor, c.usage)}}, nil
}

// afterResume says who takes the issue up again where it is, when that is
// not what its stage's instructions say.
func afterResume(p engine.Place) string {
	switch {
	case p.Issue.EntryPending != nil && p.Issue.EntryPending.Stage == p.Node.Path:
		return fmt.Sprintf("The entry work of %s did not finish: `agenttree controller` runs it again at its next pass (or run `agenttree next -i %d`).", p.Node.Path, p.Issue.ID)
	case p.Node.Controller():
		return fmt.Sprintf("%s is run by the host controller; `agenttree controller` takes the issue up again at its next pass.", p.Node.Path)
	}
	return ""
}
