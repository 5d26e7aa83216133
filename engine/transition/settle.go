package transition

import (
	"time"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/stages"
)

// all is everything the command's steps said, in the order they ran.
func (f findings) all() said {
	var s said
	s.add(f.approval)
	s.add(f.said)
	if f.resumed != nil {
		s.add(f.resumed.said)
	}
	if j := f.journey; j != nil {
		s.add(j.gate.said)
		for _, a := range j.arrivals {
			s.add(a.said)
		}
		s.add(j.said)
	}
	return s
}

// latest is the issue as the command's steps last read or wrote it.
func (f findings) latest() *issues.Issue {
	if f.journey != nil && f.journey.issue != nil {
		return f.journey.issue
	}
	return f.issue
}

// settle keeps what the command's hooks asked of people and agents: the
// first escalation stops the issue for a person (a history entry, not a
// move), the messages hooks asked to send go to the issue's outbox, and so
// do the messages of every history entry the command wrote (it had before
// entries when the command began).
func (t *Transition) settle(f findings, r *act.Result, before int) error {
	s := f.all()
	iss := f.latest()
	if len(s.send) > 0 {
		if err := notice.Queue(t.ctx, t.d.Outbox(iss.ID), iss, f.scope, s.send); err != nil {
			r.Warnings = append(r.Warnings, "could not queue messages for the agent: "+err.Error())
		}
	}
	if len(s.escalations) > 0 {
		cur, err := t.escalate(iss, s.escalations[0])
		if err != nil {
			return err
		}
		iss = cur
		r.Status, r.Escalated, r.Version = act.StatusEscalated, cur.Escalated, cur.Version
	}
	if err := t.d.Notices.QueueEntries(t.ctx, t.d.Outbox(iss.ID), iss, before); err != nil {
		r.Warnings = append(r.Warnings, "could not queue the messages of this move (the controller queues them at its next pass): "+err.Error())
	}
	return nil
}

// escalate stops iss for a person: it moves no more until a person
// resumes, skips, aborts or moves it.
func (t *Transition) escalate(iss *issues.Issue, esc escalation) (*issues.Issue, error) {
	now := time.Now().UTC().Truncate(time.Second)
	return t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		e := esc.Escalation
		e.At = now
		if e.Stage == "" {
			e.Stage = cur.Stage
		}
		cur.Escalated = &e
		if esc.failure != nil {
			// The failure that spent the budget or opened the breaker
			// counts in the breaker, not as a step back; its full text
			// is kept beside the reason's one line.
			policy.CountEscalation(cur, esc.failure, t.d.Config, e.Stage)
			e.Reason = policy.Summary(e.Reason)
			e.Detail = esc.failure.Reason
		}
		cur.History = append(cur.History, issues.HistoryEntry{From: cur.Stage, To: cur.Stage, Kind: stages.MoveEscalate,
			Actor: string(t.actor.Kind), Request: t.actor.Request, Reason: e.Reason, At: now})
		return nil
	})
}
