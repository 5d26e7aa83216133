package transition

import (
	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/stages"
)

// prHead is the head of iss's PR as the forge has it now, or "" when
// there is no PR, no forge, or no answer (the gates then say what is
// wrong).
func (t *Transition) prHead(iss *issues.Issue) (*forge.PR, string) {
	if iss.PRNumber == 0 || t.d.Forge == nil {
		return nil, ""
	}
	pr, err := t.d.Forge.PR(t.ctx, iss.PRNumber)
	if err != nil || pr.State != forge.StateOpen {
		return nil, ""
	}
	return pr, pr.HeadSHA
}

// sendBack moves iss back through CI as rc says (a dry run only says so),
// entering the CI stage as any arrival does.
func (t *Transition) sendBack(iss *issues.Issue, rc *prhead.Recheck) (findings, error) {
	f := findings{issue: iss, recheck: rc}
	if t.actor.Kind == act.ActorHuman {
		rc.ForPerson(iss.ID)
	}
	if t.dryRun {
		return f, nil
	}
	h := hop{from: rc.From, to: rc.To, kind: stages.MoveManual, reason: rc.Reason}
	cur, err := t.write(iss, act.Order{Kind: h.kind, Reason: h.reason}, h.to.Path, func(i *issues.Issue) {
		i.Stage, i.EntryPending, i.Escalated = h.to.Path, pendingOn(h), nil
	})
	if err != nil {
		return f, err
	}
	j := t.follow(cur, h)
	f.issue, f.journey = j.issue, &j
	return f, nil
}
