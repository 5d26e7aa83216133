// Package prhead holds what the engine checks of a PR's head: whether a
// head pushed while a person reviews, or after, goes back through CI
// (Stale); where a stage's entry hooks stand on the head they passed on
// (Cursor); and which hooks of a stage watch the PR or wait for its CI.
// Its answers are decisions only: the engine writes the moves they call
// for (docs/ARCHITECTURE.md §5).
package prhead

import (
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// A head pushed to the PR while a person reviews it is code that neither
// CI nor the person saw. Approving it would only move the issue to a merge
// that refuses it (merge_pr merges the head CI passed and a person
// approved), and approving again would repeat the refusal. So the issue
// goes back through the stage that ran CI before the review, saying why;
// it comes back to the review with CI passed on the new head, and a person
// approves that. The controller's watch of the PR notices the push by
// itself; a person's approve or next at the review notices it too.

// Recheck is a move back through CI for a head CI did not pass: where,
// why, and what a person does next (Todo, filled by whoever tells them).
type Recheck struct {
	// From is the issue's stage, Review the human review it is at or
	// came through, To the stage that runs CI before it.
	From, Review, To   *stages.Node
	Head, Reason, Todo string
}

// Stale is the move back through CI of iss at node, whose PR's head is
// now head, or nil: there is none when CI passed on head (or on nothing
// yet), when the issue came through no human review, or when the review
// checks CI itself (its own gates then hold a head CI did not pass).
func Stale(reg *hooks.Registry, flow *stages.Flow, node *stages.Node, iss *issues.Issue, head string) *Recheck {
	passed := iss.Outputs[stages.CIPassedSHA]
	if iss.PRNumber == 0 || head == "" || passed == "" || head == passed {
		return nil
	}
	review := ReviewOf(flow, node)
	if review == nil {
		return nil
	}
	to := ciStage(reg, flow, review)
	if to == nil {
		return nil
	}
	when := "during review"
	if review.Path != node.Path {
		when = "after the review at " + review.Path
	}
	return &Recheck{From: node, Review: review, To: to, Head: head,
		Reason: fmt.Sprintf("a new head %s was pushed %s; CI runs on it again, and a person approves the new head after (CI passed on %s, the head reviewed)",
			gitx.ShortSHA(head), when, gitx.ShortSHA(passed))}
}

// ForPerson fills in what a person does once rc is made for issue id:
// approve the new commits when the issue is back at the review.
func (rc *Recheck) ForPerson(id int) {
	rc.Todo = fmt.Sprintf("CI runs on %s at %s%s; once the issue is back at %s, look at the new commits and approve them: `agenttree approve %d`",
		gitx.ShortSHA(rc.Head), rc.To.Path, runsHere(rc.To, id), rc.Review.Path, id)
}

// runsHere says how a person has CI run at stage n now.
func runsHere(n *stages.Node, id int) string {
	if n.Controller() {
		return fmt.Sprintf(" (the controller runs it; `agenttree next -i %d` runs its pass here)", id)
	}
	return ""
}

// ReviewOf is the human review an issue at node is at, or the nearest one
// before node in flow; nil when there is none.
func ReviewOf(flow *stages.Flow, node *stages.Node) *stages.Node {
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
func ciStage(reg *hooks.Registry, flow *stages.Flow, review *stages.Node) *stages.Node {
	if checksCI(reg, review) {
		return nil
	}
	for i := flow.Index(review.Path) - 1; i >= 0; i-- {
		if checksCI(reg, flow.Nodes[i]) {
			return flow.Nodes[i]
		}
	}
	return nil
}

// checksCI reports whether a hook of n waits for, checks or watches CI:
// one whose spec writes the head CI passed on, or watches the PR.
func checksCI(reg *hooks.Registry, n *stages.Node) bool {
	for _, h := range n.EveryHook() {
		if spec, ok := reg.Hook(h.Name); ok && (spec.Watches || slices.Contains(spec.Outputs, stages.CIPassedSHA)) {
			return true
		}
	}
	return false
}

// Watcher is the entry of a hook that asks for the issue's PR to be
// watched in the background while an agent or a person works at node
// (poll_pr_status), or nil.
func Watcher(reg *hooks.Registry, node *stages.Node) *stages.HookEntry {
	for _, h := range node.Hooks() {
		if spec, ok := reg.Hook(h.Name); ok && spec.Watches {
			return h
		}
	}
	return nil
}

// Probe is the CI poll a background watch makes through w, the stage's
// watcher: the hook whose spec says it waits for CI, with the watcher's
// policies for what it finds and its interval.
func Probe(reg *hooks.Registry, w *stages.HookEntry) (*stages.HookEntry, error) {
	name, err := reg.With("waits for CI", waitsForCI)
	if err != nil {
		return nil, err
	}
	probe := &stages.HookEntry{Name: name, Pos: w.Pos, Params: map[string]any{}, Context: w.Label() + " (CI of PR)",
		OnFailure: w.OnCIFailure, OnConflict: w.OnConflict}
	if v, ok := w.Params["interval"]; ok {
		probe.Params["poll_interval"] = v
	}
	return probe, nil
}

// WaitEntry is the hook entry `pr wait` polls for iss: its stage's own
// entry of the hook whose spec says it waits for CI (so its timeouts and
// reruns apply, but not its failure policy), else that hook with the
// config's ci_polling.
func WaitEntry(reg *hooks.Registry, cfg *stages.Config, iss *issues.Issue) (*stages.HookEntry, error) {
	name, err := reg.With("waits for CI", waitsForCI)
	if err != nil {
		return nil, err
	}
	if node, ok := cfg.Node(iss.Stage); ok {
		for _, h := range node.Hooks() {
			if spec, ok := reg.Hook(h.Name); ok && waitsForCI(spec) {
				plain := *h
				plain.OnFailure, plain.OnConflict, plain.When, plain.Optional = nil, nil, nil, false
				return &plain, nil
			}
		}
	}
	return &stages.HookEntry{Name: name, Params: map[string]any{}}, nil
}

func waitsForCI(spec stages.HookSpec) bool { return spec.Waits }
