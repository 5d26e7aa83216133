package engine

import (
	"context"
	"github.com/agenttree/agenttree/engine/act"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/stages"
)

// A head pushed to the PR while a person reviews it goes back through the
// stage that ran CI before the review (prhead.Stale, docs/ARCHITECTURE.md
// §5); a person approves the new head once CI passed on it.

// ReviewHead is the controller's look at the PR of issue id, waiting at a
// human review, whose head is now head (as the forge reported it): a head
// CI did not pass sends the issue back through the stage that runs CI.
// It returns nil when there is nothing to do.
func (e *Engine) ReviewHead(ctx context.Context, id int, head string) (*Result, error) {
	return act.Finish(e.reviewHead(ctx, id, head))
}

func (e *Engine) reviewHead(ctx context.Context, id int, head string) (*Result, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	flow, node, err := e.locate(iss)
	if err != nil || !node.HumanReview() || iss.Escalated != nil {
		return nil, err
	}
	rc := prhead.Stale(e.Hooks, flow, node, iss, head)
	if rc == nil {
		return nil, nil
	}
	t := &transition{e: e, ctx: ctx, tx: tx, actor: Actor{Kind: ActorController}, run: e.Machine(flow).Start(node.Path)}
	base := Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Reasons: []string{}, Review: true}
	f, err := t.sendBack(iss, rc)
	if err != nil {
		return nil, err
	}
	res := f.result(base, false)
	if err := t.settle(f, &res, len(iss.History)); err != nil {
		return nil, err
	}
	return &res, nil
}

// prHead is the head of iss's PR as the forge has it now, or "" when
// there is no PR, no forge, or no answer (the gates then say what is
// wrong).
func (t *transition) prHead(iss *issues.Issue) (*forge.PR, string) {
	if iss.PRNumber == 0 || t.e.Forge == nil {
		return nil, ""
	}
	pr, err := t.e.Forge.PR(t.ctx, iss.PRNumber)
	if err != nil || pr.State != forge.StateOpen {
		return nil, ""
	}
	return pr, pr.HeadSHA
}

// sendBack moves iss back through CI as rc says (a dry run only says so),
// entering the CI stage as any arrival does.
func (t *transition) sendBack(iss *issues.Issue, rc *prhead.Recheck) (findings, error) {
	f := findings{issue: iss, recheck: rc}
	if t.actor.Kind == ActorHuman {
		rc.ForPerson(iss.ID)
	}
	if t.dryRun {
		return f, nil
	}
	h := hop{from: rc.From, to: rc.To, kind: stages.MoveManual, reason: rc.Reason}
	cur, err := t.write(iss, Order{Kind: h.kind, Reason: h.reason}, h.to.Path, func(i *issues.Issue) {
		i.Stage, i.EntryPending, i.Escalated = h.to.Path, pendingOn(h), nil
	})
	if err != nil {
		return f, err
	}
	j := t.follow(cur, h)
	f.issue, f.journey = j.issue, &j
	return f, nil
}

// previewApproval is what a dry run of a person's approval of iss at
// review says approving would do: which head of its PR it approves, and
// where the issue goes then, with the entry work that runs there (a
// merge). Where the forge takes the approval from agenttree (the local
// forge), the approval gate counts it as made; elsewhere the gate reports
// the forge's review as it is.
func (t *transition) previewApproval(iss *issues.Issue, pr *forge.PR, review, to *stages.Node) string {
	what := "approving moves the issue on"
	if pr != nil {
		what = t.approvalText(iss, pr)
		if _, ok := forge.As[forge.Approver](t.e.Forge); ok {
			t.approving = true
		}
	}
	what += "; then " + review.Path + " → " + to.Path
	if labels := entryLabels(to.Entering(review)); labels != "" {
		what += ", whose entry work runs: " + labels
	}
	return what
}

// checksApproval reports whether h's hook checks a person's approval.
func (t *transition) checksApproval(h *stages.HookEntry) bool {
	spec, ok := t.e.Hooks.Hook(h.Name)
	return ok && spec.Approval
}
