package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// A head pushed to the PR while a person reviews it is code that neither
// CI nor the person saw. Approving it would only move the issue to a merge
// that refuses it (merge_pr merges the head CI passed and a person
// approved), and approving again would repeat the refusal. So the issue
// goes back through the stage that ran CI before the review, saying why;
// it comes back to the review with CI passed on the new head, and a person
// approves that (docs/ARCHITECTURE.md §5). The controller's watch of the
// PR notices the push by itself; a person's approve or next at the review
// notices it too.

// recheck is a move back through CI for a head CI did not pass: where,
// why, and what a person does next (todo).
type recheck struct {
	// from is the issue's stage, review the human review it is at or came
	// through, to the stage that runs CI before it.
	from, review, to   *stages.Node
	head, reason, todo string
}

// ReviewHead is the controller's look at the PR of issue id, waiting at a
// human review, whose head is now head (as the forge reported it): a head
// CI did not pass sends the issue back through the stage that runs CI.
// It returns nil when there is nothing to do.
func (e *Engine) ReviewHead(ctx context.Context, id int, head string) (*Result, error) {
	return finished(e.reviewHead(ctx, id, head))
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
	rc := e.staleHead(flow, node, iss, head)
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

// staleHead is the move back through CI of iss at node, whose PR's head is
// now head, or nil: there is none when CI passed on head (or on nothing
// yet), when the issue came through no human review, or when the review
// checks CI itself (its own gates then hold a head CI did not pass).
func (e *Engine) staleHead(flow *stages.Flow, node *stages.Node, iss *issues.Issue, head string) *recheck {
	passed := iss.Outputs[stages.CIPassedSHA]
	if iss.PRNumber == 0 || head == "" || passed == "" || head == passed {
		return nil
	}
	review := reviewOf(flow, node)
	if review == nil {
		return nil
	}
	to := e.ciStage(flow, review)
	if to == nil {
		return nil
	}
	when := "during review"
	if review.Path != node.Path {
		when = "after the review at " + review.Path
	}
	return &recheck{from: node, review: review, to: to, head: head,
		reason: fmt.Sprintf("a new head %s was pushed %s; CI runs on it again, and a person approves the new head after (CI passed on %s, the head reviewed)",
			gitx.ShortSHA(head), when, gitx.ShortSHA(passed))}
}

// reviewOf is the human review an issue at node is at, or the nearest one
// before node in flow; nil when there is none.
func reviewOf(flow *stages.Flow, node *stages.Node) *stages.Node {
	for i := flow.Index(node.Path); i >= 0; i-- {
		if flow.Nodes[i].HumanReview() {
			return flow.Nodes[i]
		}
	}
	return nil
}

// ciStage is the nearest stage before review in flow that runs or checks
// CI, where a new head goes through CI again; nil when review does so
// itself or no stage before it does.
func (e *Engine) ciStage(flow *stages.Flow, review *stages.Node) *stages.Node {
	if e.checksCI(review) {
		return nil
	}
	for i := flow.Index(review.Path) - 1; i >= 0; i-- {
		if e.checksCI(flow.Nodes[i]) {
			return flow.Nodes[i]
		}
	}
	return nil
}

// checksCI reports whether a hook of n waits for, checks or watches CI:
// one whose spec writes the head CI passed on, or watches the PR.
func (e *Engine) checksCI(n *stages.Node) bool {
	for _, h := range n.EveryHook() {
		if spec, ok := e.Hooks.Hook(h.Name); ok && (spec.Watches || slices.Contains(spec.Outputs, stages.CIPassedSHA)) {
			return true
		}
	}
	return false
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
func (t *transition) sendBack(iss *issues.Issue, rc *recheck) (findings, error) {
	f := findings{issue: iss, recheck: rc}
	if t.actor.Kind == ActorHuman {
		rc.todo = fmt.Sprintf("CI runs on %s at %s%s; once the issue is back at %s, look at the new commits and approve them: `agenttree approve %d`",
			gitx.ShortSHA(rc.head), rc.to.Path, runsHere(rc.to, iss.ID), rc.review.Path, iss.ID)
	}
	if t.dryRun {
		return f, nil
	}
	h := hop{from: rc.from, to: rc.to, kind: stages.MoveManual, reason: rc.reason}
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

// runsHere says how a person has CI run at stage n now.
func runsHere(n *stages.Node, id int) string {
	if n.Controller() {
		return fmt.Sprintf(" (the controller runs it; `agenttree next -i %d` runs its pass here)", id)
	}
	return ""
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
