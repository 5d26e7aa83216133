package stages

// RequireReview is the bool parameter of the hook that merges the PR
// (merge_pr). Where a person's review comes before the merge in an issue's
// flow, the hook merges only the head that person approved, whatever the
// parameter says; false says that a flow without a review merges on CI
// alone, as intended. The loader warns of a flow that merges unreviewed
// and does not say so, and validate lists those that do.
const RequireReview = "require_review"

// The outputs the merge reads, which the gates write on the issue: the
// commit CI passed on (pr_ci_passed, wait_for_ci) and the commit a person
// approved (pr_approved, or the engine, for a person's approval at a
// human review). Only those hooks, and the engine, may write them.
const (
	CIPassedSHA = "ci_passed_sha"
	ApprovedSHA = "approved_sha"
)

// ReviewedAt reports whether an issue on f at node path has come through a
// person's review: a node of f up to path, path included, is a human
// review or runs a hook that checks a person's approval of the PR (one
// approval reports true for). path is included because a review's gates and completion hooks run
// once a person approves there; a merge among a review's entry hooks, run
// before anyone has looked, needs an approval all the same. For a path f
// does not hold, every node of f counts.
func (f *Flow) ReviewedAt(path string, approval func(*HookEntry) bool) bool {
	i := f.Index(path)
	if i < 0 {
		i = len(f.Nodes) - 1
	}
	for _, n := range f.Nodes[:i+1] {
		if n.HumanReview() {
			return true
		}
		for _, h := range n.EveryHook() {
			if approval(h) {
				return true
			}
		}
	}
	return false
}

// Approvals is the approval of ReviewedAt for the hooks of cat: an entry
// of a hook whose spec says it checks a person's approval (Approval).
func Approvals(cat HookCatalog) func(*HookEntry) bool {
	return func(h *HookEntry) bool {
		spec, ok := cat.Hook(h.Name)
		return ok && spec.Approval
	}
}

// EveryHook lists every hook entry of n, its stage's included: entry,
// gate and completion hooks.
func (n *Node) EveryHook() []*HookEntry {
	var out []*HookEntry
	for _, s := range []*Settings{&n.Stage.Settings, n.subSettings()} {
		if s != nil {
			out = append(append(append(out, s.PostStart...), s.PreCompletion...), s.PostCompletion...)
		}
	}
	return out
}

func (n *Node) subSettings() *Settings {
	if n.Sub == nil {
		return nil
	}
	return &n.Sub.Settings
}

// UnreviewedMerge is a hook entry that merges PRs of a flow no person
// reviews, as the config says it may (`require_review: false`).
type UnreviewedMerge struct {
	Flow string `json:"flow"`
	Node string `json:"stage"`
	Pos  Pos    `json:"pos"`
}

// UnreviewedMerges lists the places where a flow merges a PR no person
// reviewed because the config says it may, flow by flow, for validate to
// show: a merge hook's entry with `require_review: false` in a node no
// review comes before. approval is as for ReviewedAt.
func (c *Config) UnreviewedMerges(approval func(*HookEntry) bool) []UnreviewedMerge {
	var out []UnreviewedMerge
	for _, f := range c.Flows {
		// A stage's own hooks belong to each of its substages: the first
		// one the flow reaches is where they run first.
		seen := map[*HookEntry]bool{}
		for _, n := range f.Nodes {
			for _, h := range n.EveryHook() {
				waived, ok := h.Params[RequireReview].(bool)
				if !ok || waived || seen[h] {
					continue
				}
				seen[h] = true
				if !f.ReviewedAt(n.Path, approval) {
					out = append(out, UnreviewedMerge{Flow: f.Name, Node: n.Path, Pos: h.Pos})
				}
			}
		}
	}
	return out
}
