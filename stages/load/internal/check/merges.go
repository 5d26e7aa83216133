package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/stages"
)

// checkMerges warns where the hook that merges PRs (the one that declares
// stages.RequireReview) will not do what the config seems to say. It
// merges only a head CI passed and, in a flow with a person's review
// before it, a person approved, as the host recorded them (a person's
// approval at a human review is recorded, whatever hooks the review
// declares); so a flow without a review that does not say it merges
// unreviewed, a merge among the entry hooks of the flow's only review
// (they run before a person approves), and a flow that records no CI
// verdict are warned of, and so is `require_review: false` where every
// flow has a review anyway. They are warnings: such a config still works,
// and a flow that merges on CI alone is a choice to make, not a mistake.
func (v *validator) checkMerges() {
	if v.d.Errors() > 0 {
		return
	}
	approval := stages.Approvals(v.cat)
	ci := v.recorders(func(s stages.HookSpec) bool { return slices.Contains(s.Outputs, stages.CIPassedSHA) })
	approvers := v.recorders(func(s stages.HookSpec) bool { return s.Approval })
	for _, m := range v.merges() {
		var unreviewed, unapproved, unverified, reviewed []string
		for _, at := range m.at {
			f, n := at.flow, at.node
			before := f.Nodes[:f.Index(n.Path)+1]
			switch {
			case !f.ReviewedAt(n.Path, approval):
				unreviewed = append(unreviewed, f.Name)
			case !runsAny(before, approval) && !reviewBefore(f, n):
				// Only the merge's own stage is a review: its entry hooks
				// run before a person approves there.
				unapproved = append(unapproved, f.Name)
				reviewed = append(reviewed, f.Name)
			default:
				reviewed = append(reviewed, f.Name)
			}
			if !runsAny(before, v.declares(ci)) {
				unverified = append(unverified, f.Name)
			}
		}
		h, node := m.entry, m.at[0].node.Path
		waived, set := h.Params[stages.RequireReview].(bool)
		waived = set && !waived
		switch {
		case len(unreviewed) > 0 && !waived:
			v.d.Warnf(h.Pos, fmt.Sprintf("if that is meant, say so: `%s: {%s: false}`; else put a human review (`human_review: true`) before %s in %s",
				h.Name, stages.RequireReview, node, them(unreviewed)),
				"`%s` in %s merges the PRs of %s with no person's review before it: what passes CI is merged, unreviewed",
				h.Name, node, flows(unreviewed))
		case waived && len(unreviewed) == 0:
			v.d.Warnf(h.Pos, "drop it",
				"`%s: false` of `%s` in %s changes nothing: %s a person's review before it, whose approval the merge checks all the same",
				stages.RequireReview, h.Name, node, has(reviewed))
		}
		if len(unapproved) > 0 {
			v.d.Warnf(h.Pos, fmt.Sprintf("run `%s` in a stage after the review, which records the approval it merges, or add %s to a stage before %s",
				h.Name, orList(approvers), node),
				"`%s` runs on entering the human review %s, before a person approves there, and %s nothing before it that records a person's approval of the PR: "+
					"its merges are refused",
				h.Name, node, runs(unapproved))
		}
		if len(unverified) > 0 {
			v.d.Warnf(h.Pos, fmt.Sprintf("add %s to a stage before %s", orList(ci), node),
				"`%s` in %s merges only a head CI passed, and %s nothing before it that records CI's verdict: its merges are refused",
				h.Name, node, runs(unverified))
		}
	}
}

// merge is an entry of the merge hook and the first node of each flow
// where it runs.
type merge struct {
	entry *stages.HookEntry
	at    []flowNode
}

type flowNode struct {
	flow *stages.Flow
	node *stages.Node
}

// merges lists the merge hook's entries in the order the flows reach them.
func (v *validator) merges() []*merge {
	var out []*merge
	byEntry := map[*stages.HookEntry]*merge{}
	for _, f := range v.cfg.Flows {
		if v.broken[f.Name] {
			continue
		}
		seen := map[*stages.HookEntry]bool{}
		for _, n := range f.Nodes {
			for _, h := range n.EveryHook() {
				if seen[h] || !v.isMerge(h) {
					continue
				}
				seen[h] = true
				m := byEntry[h]
				if m == nil {
					m = &merge{entry: h}
					byEntry[h] = m
					out = append(out, m)
				}
				m.at = append(m.at, flowNode{flow: f, node: n})
			}
		}
	}
	return out
}

// isMerge reports whether h is the hook that merges PRs: its spec declares
// the bool parameter stages.RequireReview.
func (v *validator) isMerge(h *stages.HookEntry) bool {
	spec, ok := v.cat.Hook(h.Name)
	if !ok {
		return false
	}
	p, ok := spec.Param(stages.RequireReview)
	return ok && p.Type == stages.ParamBool
}

// recorders names the hooks of the catalog whose spec is one of those.
func (v *validator) recorders(is func(stages.HookSpec) bool) []string {
	var out []string
	for _, name := range v.cat.HookNames() {
		if spec, ok := v.cat.Hook(name); ok && spec.Name == name && is(spec) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// declares is whether an entry runs one of the hooks names.
func (v *validator) declares(names []string) func(*stages.HookEntry) bool {
	return func(h *stages.HookEntry) bool {
		spec, ok := v.cat.Hook(h.Name)
		return ok && slices.Contains(names, spec.Name)
	}
}

// reviewBefore reports whether a human review comes before n in f: a
// person's approval there is recorded (docs/CONFIG.md, human_review).
func reviewBefore(f *stages.Flow, n *stages.Node) bool {
	return slices.ContainsFunc(f.Nodes[:f.Index(n.Path)], (*stages.Node).HumanReview)
}

// runsAny reports whether one of nodes runs a hook entry is.
func runsAny(nodes []*stages.Node, is func(*stages.HookEntry) bool) bool {
	for _, n := range nodes {
		if slices.ContainsFunc(n.EveryHook(), is) {
			return true
		}
	}
	return false
}

// flows names flows in a sentence: "flow `quick`", "flows `a` and `b`".
func flows(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	if len(quoted) == 1 {
		return "flow " + quoted[0]
	}
	return "flows " + strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
}

// them is flows(names) as the object of a hint: "the flow", "each flow".
func them(names []string) string {
	if len(names) == 1 {
		return "the flow"
	}
	return "each of them"
}

func has(names []string) string {
	if len(names) == 1 {
		return flows(names) + " has"
	}
	return flows(names) + " have"
}

func runs(names []string) string {
	if len(names) == 1 {
		return flows(names) + " runs"
	}
	return flows(names) + " run"
}

// orList writes hook entries as alternatives: "`- a:` or `- b:`".
func orList(names []string) string {
	entries := make([]string, len(names))
	for i, n := range names {
		entries[i] = "`- " + n + ":`"
	}
	return strings.Join(entries, " or ")
}
