// Package approval holds what a person's approval of an issue's PR is:
// the record it leaves (Of), whether the flow checks it with a hook of its
// own (FlowChecks), and what a dry run of it says it would do (Preview,
// PreviewAgain). The engine's transition writes it.
//
// A person's approval at a human review, of an issue with a PR, is
// recorded on the issue as the head of the PR the person was shown, the
// one CI passed on (prhead.Stale sends any other back through CI):
// merge_pr merges that head and nothing else. It is recorded whatever
// hooks the review declares (docs/CONFIG.md, human_review); where the
// flow checks the approval with a hook too (pr_approved), the hook's
// record is the one kept.
package approval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// Of is the record of a person's approval of pr at its head, or nil when
// the forge did not say what the head is.
func Of(pr *forge.PR) map[string]string {
	if pr == nil || pr.HeadSHA == "" {
		return nil
	}
	return map[string]string{stages.ApprovedSHA: pr.HeadSHA}
}

// Checks reports whether h's hook checks a person's approval.
func Checks(reg *hooks.Registry, h *stages.HookEntry) bool {
	spec, ok := reg.Hook(h.Name)
	return ok && spec.Approval
}

// FlowChecks reports whether a node of flow up to node, node included,
// runs a hook that checks a person's approval.
func FlowChecks(reg *hooks.Registry, flow *stages.Flow, node *stages.Node) bool {
	checks := func(h *stages.HookEntry) bool { return Checks(reg, h) }
	for _, n := range flow.Nodes[:flow.Index(node.Path)+1] {
		if slices.ContainsFunc(n.EveryHook(), checks) {
			return true
		}
	}
	return false
}

// Preview is what a dry run of a person's approval of iss at review says
// approving would do: which head of its PR it approves, and where the
// issue goes then, with the entry work that runs there (a merge). counted
// says the forge takes the approval from agenttree (the local forge), so
// the approval gate counts it as made; elsewhere the gate reports the
// forge's review as it is.
func Preview(f forge.Forge, iss *issues.Issue, pr *forge.PR, review, to *stages.Node) (what string, counted bool) {
	what = "approving moves the issue on"
	if pr != nil {
		what = text(iss, pr)
		_, counted = forge.As[forge.Approver](f)
	}
	what += "; then " + review.Path + " → " + to.Path
	if labels := entryLabels(to.Entering(review)); labels != "" {
		what += ", whose entry work runs: " + labels
	}
	return what, counted
}

// PreviewAgain is what a dry run of a person's approval of iss at node,
// after the review, says approving would do: record the approval of its
// PR's head (or ask the forge, where a hook checks it), then run node's
// unfinished entry work again.
func PreviewAgain(f forge.Forge, reg *hooks.Registry, cfg *stages.Config, iss *issues.Issue, pr *forge.PR, flow *stages.Flow, node *stages.Node) string {
	what := "approving asks the forge whether the PR is approved"
	if pr != nil {
		what = text(iss, pr)
		if _, ok := forge.As[forge.Approver](f); !ok && FlowChecks(reg, flow, node) {
			what = fmt.Sprintf("approving asks the forge whether PR #%d is approved at its head %s", pr.Number, gitx.ShortSHA(pr.HeadSHA))
		}
	}
	var list []*stages.HookEntry
	if p := iss.EntryPending; p != nil {
		from, _ := cfg.Node(p.From)
		list = node.Entering(from)
		list = list[min(p.Done, len(list)):]
	}
	what += "; then the entry work of " + node.Path + " runs again"
	if labels := entryLabels(list); labels != "" {
		what += ": " + labels
	}
	return what
}

// text says which head of pr a person's approval records.
func text(iss *issues.Issue, pr *forge.PR) string {
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
