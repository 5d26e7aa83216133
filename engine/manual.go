package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agnivade/levenshtein"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// People's commands are the ways out of an escalation and a person's word
// over the pipeline. They are not edges of the stage machine (a person
// overrides it): a move only has to stay inside the issue's flow. Only a
// person may give them; an agent or the controller is told who can.

// Resume lets an issue go on after an escalation: it clears the
// escalation, the retry budgets used and the circuit breaker, so the
// controller (or the next `agenttree next`) tries the stage again.
func (e *Engine) Resume(ctx context.Context, id int, actor Actor, reason string) (*Result, error) {
	return e.byHand(ctx, id, actor, order{
		kind: stages.MoveResume, what: "resume an issue", usage: fmt.Sprintf("agenttree resume %d", id),
		reason: cmp.Or(strings.TrimSpace(reason), "a person resumed the issue"),
	})
}

// Skip moves the issue past its stage without the stage's gates, to the
// stage `next` would choose. The reason is kept in the history.
func (e *Engine) Skip(ctx context.Context, id int, actor Actor, reason string) (*Result, error) {
	return e.byHand(ctx, id, actor, order{
		kind: stages.MoveSkip, what: "skip a stage", usage: fmt.Sprintf("agenttree skip %d --reason TEXT", id),
		reason: strings.TrimSpace(reason), needs: "a reason (--reason), kept in the issue's history", target: e.skipTarget,
	})
}

// Abort sends the issue to its flow's abandon stage (`terminal: abandon`).
func (e *Engine) Abort(ctx context.Context, id int, actor Actor, reason string) (*Result, error) {
	return e.byHand(ctx, id, actor, order{
		kind: stages.MoveAbort, what: "abort an issue", usage: fmt.Sprintf("agenttree abort %d", id),
		reason: cmp.Or(strings.TrimSpace(reason), "a person abandoned the issue"), target: abandonTarget,
	})
}

// Reject sends work at a human review back to an earlier stage of the
// issue's flow: to, else the review's on_failure.step_back_to, else the
// nearest earlier stage where an agent works. The message is the history
// entry's reason, which the agent is sent.
func (e *Engine) Reject(ctx context.Context, id int, actor Actor, to, message string) (*Result, error) {
	return e.byHand(ctx, id, actor, order{
		kind: stages.MoveReject, what: "reject work at a review", usage: fmt.Sprintf("agenttree reject %d --message TEXT", id),
		reason: strings.TrimSpace(message), needs: "a message for the agent (--message)",
		target: func(p place) (*stages.Node, []string, error) { return e.rejectTarget(p, to) },
	})
}

// Move puts the issue at any stage of its flow, even from a stage the
// config no longer declares. The reason is kept in the history.
func (e *Engine) Move(ctx context.Context, id int, actor Actor, stage, reason string) (*Result, error) {
	return e.byHand(ctx, id, actor, order{
		kind: stages.MoveManual, what: "move an issue by hand", usage: fmt.Sprintf("agenttree move %d %s --reason TEXT", id, stage),
		reason: strings.TrimSpace(reason), needs: "a reason (--reason), kept in the issue's history", anywhere: true,
		target: func(p place) (*stages.Node, []string, error) { return e.moveTarget(p, stage) },
	})
}

// order is one of people's commands.
type order struct {
	kind stages.Move
	// what and usage say, in a refusal, what only a person may do and
	// the command a person runs.
	what, usage string
	reason      string
	// needs says what the command must be given when reason is empty.
	needs string
	// anywhere: the command works on an issue at a stage the config no
	// longer declares (place.node is nil).
	anywhere bool
	// target is where the issue goes (and the stages passed over); nil
	// for a command that does not move it.
	target func(place) (*stages.Node, []string, error)
}

// place is where a locked issue is.
type place struct {
	iss  *issues.Issue
	flow *stages.Flow
	// node is nil for a stage the config does not declare.
	node *stages.Node
}

// byHand runs a person's command on issue id: it refuses anyone else,
// then, under the issue's lock, decides from the issue as it is there,
// writes the command in one update, and enters the stage it moved the
// issue to, as any arrival does.
func (e *Engine) byHand(ctx context.Context, id int, actor Actor, o order) (*Result, error) {
	if o.reason == "" {
		return nil, fmt.Errorf("%s needs %s: `%s`", o.kind, o.needs, o.usage)
	}
	if actor.Kind != ActorHuman {
		return e.refuse(id, actor, o)
	}
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	p, err := e.where(iss, o.anywhere)
	if err != nil {
		return nil, err
	}
	base := Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Reasons: []string{}}
	t := &transition{e: e, ctx: ctx, tx: tx, actor: actor, m: e.Machine(p.flow)}
	if o.target == nil {
		return t.reset(p, o, base)
	}
	to, skipped, err := o.target(p)
	if err != nil {
		return nil, err
	}
	return t.override(p, hop{from: p.node, to: to, kind: o.kind, reason: o.reason}, skipped, base)
}

// refuse tells actor, who is not a person, who can give the command.
func (e *Engine) refuse(id int, actor Actor, o order) (*Result, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	return &Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Status: StatusWaiting,
		Reasons: []string{fmt.Sprintf("only a person can %s; %s cannot (ask a person to run `%s`)", o.what, actor, o.usage)}}, nil
}

// where finds where iss is. With anywhere, a stage the config does not
// declare (or that left the issue's flow) is no error: a person moves the
// issue out of it.
func (e *Engine) where(iss *issues.Issue, anywhere bool) (place, error) {
	flow, node, err := e.locate(iss)
	if err == nil || !anywhere {
		return place{iss: iss, flow: flow, node: node}, err
	}
	if flow, err = e.Config.Flow(iss.Flow); err != nil {
		return place{}, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	p := place{iss: iss, flow: flow}
	if n, ok := e.Config.Node(iss.Stage); ok && n.Path == iss.Stage {
		p.node = n
	}
	return p, nil
}

// reset writes a person's resume: the issue stays where it is, with its
// escalation, budgets used and breaker cleared.
func (t *transition) reset(p place, o order, base Result) (*Result, error) {
	cur, err := t.writeByHand(p.iss, o.kind, p.iss.Stage, o.reason, func(i *issues.Issue) {
		i.Escalated, i.Attempts, i.Breaker = nil, nil, nil
	})
	if err != nil {
		return nil, err
	}
	// "Try again" means CI too: the waiting hook reruns a failure it saw
	// before this (a flaky check), once.
	if err := t.tx.UpdateWatch(map[string]string{hooks.WatchResumedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
		base.Warnings = append(base.Warnings, "could not ask for CI to run again: "+err.Error())
	}
	res := base
	res.Status, res.Kind, res.Version, res.Reasons = StatusAdvanced, o.kind, cur.Version, []string{o.reason}
	res.Instructions = t.e.afterResume(p.node, cur)
	return &res, nil
}

// afterResume says who takes the issue up again at node.
func (e *Engine) afterResume(node *stages.Node, iss *issues.Issue) string {
	switch {
	case entryPendingAt(iss, node):
		return fmt.Sprintf("The entry work of %s did not finish: `agenttree controller` runs it again at its next pass (or run `agenttree next -i %d`).", node.Path, iss.ID)
	case node.Controller():
		return fmt.Sprintf("%s is run by the host controller; `agenttree controller` takes the issue up again at its next pass.", node.Path)
	}
	return e.instructions(node, iss)
}

// override writes a person's move h in one update, then enters h.to the
// way any arrival does, and follows where its entry hooks send the issue.
func (t *transition) override(p place, h hop, skipped []string, base Result) (*Result, error) {
	cur, err := t.writeByHand(p.iss, h.kind, h.to.Path, h.reason, func(i *issues.Issue) {
		i.Stage, i.EntryPending, i.Escalated = h.to.Path, pendingOn(h), nil
	})
	if err != nil {
		return nil, err
	}
	j := t.follow(cur, h)
	f := findings{issue: cur, skipped: skipped, journey: &j}
	res := f.result(base, false)
	if err := t.settle(f, &res, len(p.iss.History)); err != nil {
		return nil, err
	}
	return &res, nil
}

// writeByHand writes change and the history entry of a person's command,
// from the issue's stage to to, in one update of iss.
func (t *transition) writeByHand(iss *issues.Issue, kind stages.Move, to, reason string, change func(*issues.Issue)) (*issues.Issue, error) {
	at := time.Now().UTC().Truncate(time.Second)
	return t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		from := cur.Stage
		change(cur)
		cur.History = append(cur.History, issues.HistoryEntry{From: from, To: to, Kind: kind, Actor: string(t.actor.Kind), Reason: reason, At: at})
		return nil
	})
}

// pendingOn is the entry work a move h leaves to do, marked in the write
// of the move as commit marks it: h.to's entry hooks, entered from h.from
// (nil: from a stage the config does not declare).
func pendingOn(h hop) *issues.EntryPending {
	if len(h.to.Entering(h.from)) == 0 {
		return nil
	}
	p := &issues.EntryPending{Stage: h.to.Path}
	if h.from != nil {
		p.From = h.from.Path
	}
	return p
}

// follow enters h.to once the move h is written, and follows where the
// entry hooks send the issue from there: the journey of a move the stage
// machine did not make, followed by those it makes.
func (t *transition) follow(cur *issues.Issue, h hop) journey {
	a := t.arrive(cur, h)
	j := journey{issue: a.issue}
	if a.next != nil {
		j = t.drive(a.issue, h.to, *a.next, false)
	}
	j.want, j.gate = h, decision{status: StatusAdvanced, hop: h}
	j.hops, j.arrivals = append([]hop{h}, j.hops...), append([]arrival{a}, j.arrivals...)
	return j
}

// skipTarget is where `next` would move the issue, without its gates.
func (e *Engine) skipTarget(p place) (*stages.Node, []string, error) {
	if p.node.Terminal() != stages.TerminalNone {
		return nil, nil, fmt.Errorf("issue %d is at %s, a terminal stage: there is nothing past it to skip to (`agenttree move %d STAGE --reason TEXT` puts it elsewhere)",
			p.iss.ID, p.node.Path, p.iss.ID)
	}
	to, skipped, err := p.flow.Next(p.node.Path, e.Snapshot(p.iss).CondVars())
	if err != nil {
		return nil, nil, err
	}
	if to == nil {
		return nil, nil, fmt.Errorf("issue %d is at %s, the last stage of flow %q: there is nothing to skip to", p.iss.ID, p.node.Path, p.flow.Name)
	}
	return to, skipped, nil
}

// abandonTarget is the flow's abandon stage.
func abandonTarget(p place) (*stages.Node, []string, error) {
	n := terminalNode(p.flow, stages.TerminalAbandon)
	switch {
	case n == nil:
		return nil, nil, fmt.Errorf("flow %q has no stage for abandoned issues; add one with `terminal: abandon` (say `- name: not_doing`) to the flow, or put issue %d elsewhere with `agenttree move %d STAGE --reason TEXT`",
			p.flow.Name, p.iss.ID, p.iss.ID)
	case n.Path == p.node.Path:
		return nil, nil, fmt.Errorf("issue %d is already at %s, where flow %q abandons issues", p.iss.ID, n.Path, p.flow.Name)
	}
	return n, nil, nil
}

// terminalNode is the first node of flow that ends issues the way term
// says, or nil.
func terminalNode(flow *stages.Flow, term stages.Terminal) *stages.Node {
	for _, n := range flow.Nodes {
		if n.Terminal() == term {
			return n
		}
	}
	return nil
}

// rejectTarget is where a rejection at a review sends the work: to when
// given, else the review's own step-back target, else the nearest earlier
// stage where an agent works. It must come before the review in the flow.
func (e *Engine) rejectTarget(p place, to string) (*stages.Node, []string, error) {
	if !p.node.HumanReview() {
		return nil, nil, fmt.Errorf("issue %d is at %s: %w; reject sends work back from a review (elsewhere, `agenttree move %d STAGE --reason TEXT`)",
			p.iss.ID, p.node.Path, ErrNotReview, p.iss.ID)
	}
	at := p.flow.Index(p.node.Path)
	if to != "" {
		n, err := e.flowNode(p, to)
		if err != nil {
			return nil, nil, err
		}
		if p.flow.Index(n.Path) >= at {
			return nil, nil, fmt.Errorf("reject sends work back: %s does not come before %s in flow %q (its stages: %s)",
				n.Path, p.node.Path, p.flow.Name, strings.Join(p.flow.Paths(), ", "))
		}
		return n, nil, nil
	}
	if of := p.node.OnFailure(); of != nil && of.StepBackTo != "" {
		if n, ok := e.Config.Node(of.StepBackTo); ok && p.flow.Index(n.Path) >= 0 && p.flow.Index(n.Path) < at {
			return n, nil, nil
		}
	}
	vars := e.Snapshot(p.iss).CondVars()
	for i := at - 1; i >= 0; i-- {
		if n := p.flow.Nodes[i]; agentWorks(n, vars) {
			return n, nil, nil
		}
	}
	return nil, nil, fmt.Errorf("no stage before %s in flow %q is an agent's; say where the work goes with --to STAGE", p.node.Path, p.flow.Name)
}

// agentWorks reports whether n is a stage where an agent works that
// `next` would pass through for an issue with vars.
func agentWorks(n *stages.Node, vars map[string]any) bool {
	if n.Controller() || n.HumanReview() || n.ParkingLot() || n.RedirectOnly() || n.Terminal() != stages.TerminalNone {
		return false
	}
	if cond := n.Condition(); cond != nil {
		ok, err := cond.Eval(vars)
		return ok && err == nil
	}
	return true
}

// moveTarget is the stage of the issue's flow that a person named.
func (e *Engine) moveTarget(p place, stage string) (*stages.Node, []string, error) {
	n, err := e.flowNode(p, stage)
	if err != nil {
		return nil, nil, err
	}
	if n.Path == p.iss.Stage {
		return nil, nil, fmt.Errorf("issue %d is already at %s; nothing to move (an escalated issue goes on with `agenttree resume %d`)", p.iss.ID, n.Path, p.iss.ID)
	}
	return n, nil, nil
}

// flowNode finds the node of the issue's flow that ref names, as a hook's
// stage reference is read from where the issue is (a bare name is a
// substage of its stage first); a typo gets a suggestion.
func (e *Engine) flowNode(p place, ref string) (*stages.Node, error) {
	paths := strings.Join(p.flow.Paths(), ", ")
	n, ok := e.Config.ResolveRef(p.node, ref)
	switch {
	case ok && p.flow.Index(n.Path) >= 0:
		return n, nil
	case ok:
		return nil, fmt.Errorf("%s is not a stage of flow %q, issue %d's flow (its stages: %s)", n.Path, p.flow.Name, p.iss.ID, paths)
	}
	hint := ""
	if near := closest(ref, flowNames(p.flow)); near != "" {
		hint = fmt.Sprintf("; did you mean `%s`?", near)
	}
	return nil, fmt.Errorf("flow %q has no stage %q%s (its stages: %s)", p.flow.Name, ref, hint, paths)
}

// flowNames are the names a stage of flow may be given by: its paths and
// its stages' names.
func flowNames(flow *stages.Flow) []string {
	var names []string
	for _, n := range flow.Nodes {
		names = append(names, n.Path)
		if n.Sub != nil && !slices.Contains(names, n.Stage.Name) {
			names = append(names, n.Stage.Name)
		}
	}
	return names
}

// closest is the name of known nearest to got, if near enough to be what
// was meant: as many edits as a third of got, at most three.
func closest(got string, known []string) string {
	best, bestDist := "", min(len(got)/3+1, 3)+1
	for _, k := range known {
		if d := levenshtein.ComputeDistance(got, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}
