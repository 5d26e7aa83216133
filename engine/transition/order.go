package transition

import (
	"time"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// stay writes an order that leaves the issue where it is.
func (t *Transition) stay(p act.Place, o act.Order, base act.Result) (*act.Result, error) {
	cur, err := t.write(p.Issue, o, p.Issue.Stage, nil)
	if err != nil {
		return nil, err
	}
	if o.Kind == stages.MoveResume {
		// "Try again" means CI too: the waiting hook reruns a failure it
		// saw before this (a flaky check), once.
		if err := t.tx.UpdateWatch(map[string]string{hooks.WatchResumedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
			base.Warnings = append(base.Warnings, "could not ask for CI to run again: "+err.Error())
		}
	}
	res := base
	res.Status, res.Kind, res.Version, res.Reasons = act.StatusAdvanced, o.Kind, cur.Version, []string{o.Reason}
	if o.Instructions != nil {
		res.Instructions = o.Instructions(act.Place{Issue: cur, Flow: p.Flow, Node: p.Node})
	}
	if res.Instructions == "" && p.Node != nil {
		res.Instructions = t.d.Notices.Instructions(p.Node, cur)
	}
	if err := t.d.Notices.QueueEntries(t.ctx, t.d.Outbox(cur.ID), cur, len(p.Issue.History)); err != nil {
		res.Warnings = append(res.Warnings, "could not queue the messages of this change (the controller queues them at its next pass): "+err.Error())
	}
	return &res, nil
}

// override writes the move h that order o makes in one update, then
// enters h.to the way any arrival does, and follows where its entry hooks
// send the issue.
func (t *Transition) override(p act.Place, o act.Order, h hop, skipped []string, base act.Result) (*act.Result, error) {
	cur, err := t.write(p.Issue, o, h.to.Path, func(i *issues.Issue) {
		i.Stage, i.EntryPending, i.Escalated = h.to.Path, pendingOn(h), nil
	})
	if err != nil {
		return nil, err
	}
	j := t.follow(cur, h)
	f := findings{issue: cur, skipped: skipped, journey: &j}
	res := f.result(base, false)
	if err := t.settle(f, &res, len(p.Issue.History)); err != nil {
		return nil, err
	}
	return &res, nil
}

// write makes, in one update of iss, the move (nil for none) and the
// order's change, and adds the order's history entry, from the issue's
// stage to to.
func (t *Transition) write(iss *issues.Issue, o act.Order, to string, move func(*issues.Issue)) (*issues.Issue, error) {
	at := time.Now().UTC().Truncate(time.Second)
	return t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		from := cur.Stage
		if move != nil {
			move(cur)
		}
		if o.Change != nil {
			o.Change(cur)
		}
		cur.History = append(cur.History, issues.HistoryEntry{From: from, To: to, Kind: o.Kind, Actor: string(t.actor.Kind), Request: t.actor.Request, Reason: o.Reason, At: at})
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
func (t *Transition) follow(cur *issues.Issue, h hop) journey {
	t.run.Place(h.to.Path)
	a := t.arrive(cur, h)
	j := journey{issue: a.issue}
	if a.next != nil {
		j = t.drive(a.issue, h.to, *a.next, false)
	}
	j.want, j.gate = h, decision{status: act.StatusAdvanced, hop: h}
	j.hops, j.arrivals = append([]hop{h}, j.hops...), append([]arrival{a}, j.arrivals...)
	return j
}
