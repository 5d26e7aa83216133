package transition

import (
	"time"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/approval"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/stages"
)

// A person's approval is the engine/approval package's: this writes it.

// approveAgain is a person's approval of iss at node, after the review,
// where the entry work (a merge) refused what nobody had approved: a move
// past the review, say. Where the flow checks the approval with a hook up
// to node, that hook decides, as it would have at the review
// (reapprove); otherwise the person's approval of the PR's head is the
// record, as it is at the review.
func (t *Transition) approveAgain(iss *issues.Issue, flow *stages.Flow, node *stages.Node, pr *forge.PR) (*issues.Issue, said, error) {
	outputs := approval.Of(pr)
	if outputs == nil || approval.FlowChecks(t.d.Hooks, flow, node) {
		return t.reapprove(iss, node)
	}
	var s said
	s.warn(t.approvePR(iss)...)
	return t.recordReapproval(iss, outputs, s)
}

// recordReapproval writes a person's approval of iss's PR as it is now
// (outputs: approved_sha and what goes with it), after the review.
func (t *Transition) recordReapproval(iss *issues.Issue, outputs map[string]string, s said) (*issues.Issue, said, error) {
	cur, err := t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		policy.ApplyOutputs(cur, outputs)
		cur.History = append(cur.History, issues.HistoryEntry{From: cur.Stage, To: cur.Stage, Kind: stages.MoveApprove, Actor: string(t.actor.Kind), Request: t.actor.Request,
			Reason: "a person approved the PR again, as it is now", At: time.Now().UTC().Truncate(time.Second)})
		return nil
	})
	if err != nil {
		return nil, s, err
	}
	s.notes = append(s.notes, "approved the PR at its current head")
	return cur, s, nil
}

// prHead is the head of iss's PR as the forge has it now, or "" when
// there is no PR, no forge, or no answer (the gates then say what is
// wrong).
func (t *Transition) prHead(iss *issues.Issue) (*forge.PR, string) {
	if iss.PRNumber == 0 || t.d.Forge() == nil {
		return nil, ""
	}
	pr, err := t.d.Forge().PR(t.ctx, iss.PRNumber)
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
