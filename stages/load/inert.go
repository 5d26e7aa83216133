package load

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// The earlier tool read keys that change nothing here: the colours and
// review documents of its web page, the model it started its agents
// with, the ports it gave their servers, a description of each role, the
// manager role (a person here, who needs no entry). A file written for it
// carries dozens, and a warning each would bury the few that matter (a
// hook agenttree does not run, a container it does not start), so the
// map form's shaping drops them and sums them up in one warning. Keys
// whose loss changes what happens are left to the readers, which warn of
// each.

// inertPlace is where an inert key is written.
type inertPlace int

const (
	inertTop inertPlace = iota
	inertRole
	inertTool
	inertStage
)

// inertKeys are the earlier tool's keys that change nothing here, by
// where they are written.
var inertKeys = map[inertPlace][]string{
	inertTop: {"default_model", "model_tiers", "port_range", "refresh_interval", "scripts_dir", "show_issue_yaml",
		"save_tmux_history", "security", "commands", "test_commands", "lint_commands"},
	inertRole:  {"description", "model", "model_tier", "process"},
	inertTool:  {"startup_prompt"},
	inertStage: {"color", "review_doc", "model", "model_tier"},
}

// InertKeys lists the earlier tool's keys the map form reads and ignores
// as changing nothing, by where they are written ("", "roles.*",
// "tools.*", "stage"), for the reference to document.
func InertKeys() map[string][]string {
	return map[string][]string{
		"":        slices.Clone(inertKeys[inertTop]),
		"roles.*": slices.Clone(inertKeys[inertRole]),
		"tools.*": slices.Clone(inertKeys[inertTool]),
		"stage":   slices.Clone(inertKeys[inertStage]),
	}
}

// inertKey is one such key as written, and the group it is counted in.
type inertKey struct {
	at    *yaml.Node
	group string
}

func (p inertPlace) group(key string) string {
	switch p {
	case inertRole:
		return "roles' `" + key + "`"
	case inertTool:
		return "tools' `" + key + "`"
	case inertStage:
		return "stages' `" + key + "`"
	}
	return "`" + key + "`"
}

// dropInert keeps the pairs of ps that are not inert at place, noting
// the others.
func (f *mapForm) dropInert(ps []yamlnode.Pair, place inertPlace) []yamlnode.Pair {
	out := ps[:0:0]
	for _, p := range ps {
		if slices.Contains(inertKeys[place], p.Key.Value) {
			f.inert = append(f.inert, inertKey{at: p.Key, group: place.group(p.Key.Value)})
			continue
		}
		out = append(out, p)
	}
	return out
}

// inertEntries drops the inert keys of each entry of the mapping of
// names n (`roles:`, `tools:`) and a role's `skill:` (warned of), and
// with dropEntry whole entries; it returns n itself when nothing is
// dropped. An entry that is not a mapping is left for its reader to
// report.
func (f *mapForm) inertEntries(n *yaml.Node, place inertPlace, dropEntry func(yamlnode.Pair) bool) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	changed := false
	var content []*yaml.Node
	for _, p := range yamlnode.Pairs(n) {
		if dropEntry != nil && dropEntry(p) {
			changed = true
			continue
		}
		if p.Val.Kind == yaml.MappingNode {
			ps := f.dropInert(yamlnode.Pairs(p.Val), place)
			if place == inertRole {
				ps = f.roleSkill(p.Key.Value, ps)
			}
			if 2*len(ps) != len(p.Val.Content) {
				p.Val, changed = withPairs(p.Val, ps), true
			}
		}
		content = append(content, p.Key, p.Val)
	}
	if !changed {
		return n
	}
	return withPairs(n, nil, content...)
}

// roleSkill warns of a role's `skill:`, the file the earlier tool gave the
// role's agent, and drops it: here a stage has the skill, and the role's
// agent would go without it.
func (f *mapForm) roleSkill(role string, ps []yamlnode.Pair) []yamlnode.Pair {
	return slices.DeleteFunc(ps, func(p yamlnode.Pair) bool {
		if p.Key.Value != "skill" {
			return false
		}
		f.d.Warnf(f.d.Pos(p.Val), "put `skill: FILE` on the stages the role works in: agenttree prints a stage's skill when an issue enters it",
			"roles.%s.skill is not read", role)
		return true
	})
}

// withPairs is a copy of the mapping n, at its place, holding ps (or the
// keys and values content).
func withPairs(n *yaml.Node, ps []yamlnode.Pair, content ...*yaml.Node) *yaml.Node {
	out := *n
	out.Content = content
	for _, p := range ps {
		out.Content = append(out.Content, p.Key, p.Val)
	}
	return &out
}

// personRole drops the earlier tool's entry for a role a person plays
// (`manager`), which names no tool: a person needs no entry. One that
// names a tool is left to the roles' reader, which says the tool is not
// started.
func (f *mapForm) personRole(p yamlnode.Pair) bool {
	if stages.Role(p.Key.Value).Agent() || slices.ContainsFunc(yamlnode.Pairs(p.Val), func(q yamlnode.Pair) bool { return q.Key.Value == "tool" }) {
		return false
	}
	f.inert = append(f.inert, inertKey{at: p.Key, group: "the `" + p.Key.Value + "` role"})
	return true
}

// inertSummary warns once of the inert keys dropped, where the first is
// written, counting them by group in the order they were first met.
func (f *mapForm) inertSummary() {
	if len(f.inert) == 0 {
		return
	}
	var groups []string
	count := map[string]int{}
	for _, k := range f.inert {
		if count[k.group] == 0 {
			groups = append(groups, k.group)
		}
		count[k.group]++
	}
	for i, g := range groups {
		if n := count[g]; n > 1 {
			groups[i] = fmt.Sprintf("%s (%d)", g, n)
		}
	}
	first := slices.MinFunc(f.inert, func(a, b inertKey) int {
		if a.at.Line != b.at.Line {
			return a.at.Line - b.at.Line
		}
		return a.at.Column - b.at.Column
	})
	what, hint := fmt.Sprintf("%d keys the earlier tool read change", len(f.inert)), "them"
	if len(f.inert) == 1 {
		what, hint = "1 key the earlier tool read changes", "it"
	}
	f.d.Warnf(f.d.Pos(first.at), fmt.Sprintf("agenttree has no use for %[1]s: leave %[1]s while the earlier tool still reads this file, or delete %[1]s", hint),
		"%s nothing here: %s", what, strings.Join(groups, ", "))
}
