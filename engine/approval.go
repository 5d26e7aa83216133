package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// A person's approval at a human review, of an issue with a PR, is
// recorded on the issue as the head of the PR the person was shown, the
// one CI passed on (prhead.Stale sends any other back through CI): merge_pr
// merges that head and nothing else. It is recorded whatever hooks the
// review declares (docs/CONFIG.md, human_review); where the flow checks
// the approval with a hook too (pr_approved), the hook's record is the
// one kept.

// approvalOf is the record of a person's approval of pr at its head, or
// nil when the forge did not say what the head is.
func approvalOf(pr *forge.PR) map[string]string {
	if pr == nil || pr.HeadSHA == "" {
		return nil
	}
	return map[string]string{stages.ApprovedSHA: pr.HeadSHA}
}

// approveAgain is a person's approval of iss at node, after the review,
// where the entry work (a merge) refused what nobody had approved: a move
// past the review, say. Where the flow checks the approval with a hook up
// to node, that hook decides, as it would have at the review
// (reapprove); otherwise the person's approval of the PR's head is the
// record, as it is at the review.
func (t *transition) approveAgain(iss *issues.Issue, flow *stages.Flow, node *stages.Node, pr *forge.PR) (*issues.Issue, said, error) {
	outputs := approvalOf(pr)
	if outputs == nil || t.flowChecksApproval(flow, node) {
		return t.reapprove(iss, node)
	}
	var s said
	s.warn(t.approvePR(iss)...)
	return t.recordReapproval(iss, outputs, s)
}

// previewReapproval is what a dry run of a person's approval of iss at
// node, after the review, says approving would do (approveAgain): record
// the approval of its PR's head, then run node's unfinished entry work
// again.
func (t *transition) previewReapproval(iss *issues.Issue, pr *forge.PR, flow *stages.Flow, node *stages.Node) string {
	what := "approving asks the forge whether the PR is approved"
	if pr != nil {
		what = t.approvalText(iss, pr)
		if _, ok := forge.As[forge.Approver](t.e.Forge); !ok && t.flowChecksApproval(flow, node) {
			what = fmt.Sprintf("approving asks the forge whether PR #%d is approved at its head %s", pr.Number, gitx.ShortSHA(pr.HeadSHA))
		}
	}
	var list []*stages.HookEntry
	if p := iss.EntryPending; p != nil {
		from, _ := t.e.Config.Node(p.From)
		list = node.Entering(from)
		list = list[min(p.Done, len(list)):]
	}
	what += "; then the entry work of " + node.Path + " runs again"
	if labels := entryLabels(list); labels != "" {
		what += ": " + labels
	}
	return what
}

// approvalText says which head of pr a person's approval records.
func (t *transition) approvalText(iss *issues.Issue, pr *forge.PR) string {
	what := fmt.Sprintf("approving records your approval of PR #%d at its head %s", pr.Number, gitx.ShortSHA(pr.HeadSHA))
	if iss.Outputs[stages.CIPassedSHA] == pr.HeadSHA {
		what += " (CI passed on it)"
	}
	return what
}

// entryLabels names entry hooks in a sentence.
func entryLabels(list []*stages.HookEntry) string {
	labels := make([]string, len(list))
	for i, h := range list {
		labels[i] = h.Label()
	}
	return strings.Join(labels, ", ")
}

// flowChecksApproval reports whether a node of flow up to node, node
// included, runs a hook that checks a person's approval.
func (t *transition) flowChecksApproval(flow *stages.Flow, node *stages.Node) bool {
	for _, n := range flow.Nodes[:flow.Index(node.Path)+1] {
		if slices.ContainsFunc(n.EveryHook(), t.checksApproval) {
			return true
		}
	}
	return false
}

// recordReapproval writes a person's approval of iss's PR as it is now
// (outputs: approved_sha and what goes with it), after the review.
func (t *transition) recordReapproval(iss *issues.Issue, outputs map[string]string, s said) (*issues.Issue, said, error) {
	cur, err := t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		applyOutputs(cur, outputs)
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
