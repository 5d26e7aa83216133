package people

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/stages"
)

// skipTarget is where `next` would move the issue, without its gates.
func skipTarget(e *engine.Engine, p engine.Place) (*stages.Node, []string, error) {
	if p.Node.Terminal() != stages.TerminalNone {
		return nil, nil, fmt.Errorf("issue %d is at %s, a terminal stage: there is nothing past it to skip to (`agenttree move %d STAGE --reason TEXT` puts it elsewhere)",
			p.Issue.ID, p.Node.Path, p.Issue.ID)
	}
	to, skipped, err := p.Flow.Next(p.Node.Path, e.Snapshot(p.Issue).CondVars())
	if err != nil {
		return nil, nil, err
	}
	if to == nil {
		return nil, nil, fmt.Errorf("issue %d is at %s, the last stage of flow %q: there is nothing to skip to", p.Issue.ID, p.Node.Path, p.Flow.Name)
	}
	return to, skipped, nil
}

// abandonTarget is the flow's abandon stage.
func abandonTarget(p engine.Place) (*stages.Node, []string, error) {
	i := slices.IndexFunc(p.Flow.Nodes, func(n *stages.Node) bool { return n.Terminal() == stages.TerminalAbandon })
	switch {
	case i < 0:
		return nil, nil, fmt.Errorf("flow %q has no stage for abandoned issues; add one with `terminal: abandon` (say `- name: not_doing`) to the flow, or put issue %d elsewhere with `agenttree move %d STAGE --reason TEXT`",
			p.Flow.Name, p.Issue.ID, p.Issue.ID)
	case p.Flow.Nodes[i].Path == p.Node.Path:
		return nil, nil, fmt.Errorf("issue %d is already at %s, where flow %q abandons issues", p.Issue.ID, p.Node.Path, p.Flow.Name)
	}
	return p.Flow.Nodes[i], nil, nil
}

// rejectTarget is where a rejection at a review sends the work: to when
// given, else the review's own step-back target, else the nearest earlier
// stage where an agent works. It must come before the review in the flow.
func rejectTarget(e *engine.Engine, p engine.Place, to string) (*stages.Node, []string, error) {
	if !p.Node.HumanReview() {
		return nil, nil, fmt.Errorf("issue %d is at %s: %w; reject sends work back from a review (elsewhere, `agenttree move %d STAGE --reason TEXT`)",
			p.Issue.ID, p.Node.Path, engine.ErrNotReview, p.Issue.ID)
	}
	at := p.Flow.Index(p.Node.Path)
	if to != "" {
		n, err := flowNode(e, p, to)
		if err != nil {
			return nil, nil, err
		}
		if p.Flow.Index(n.Path) >= at {
			return nil, nil, fmt.Errorf("reject sends work back: %s does not come before %s in flow %q (its stages: %s)",
				n.Path, p.Node.Path, p.Flow.Name, strings.Join(p.Flow.Paths(), ", "))
		}
		return n, nil, nil
	}
	vars := e.Snapshot(p.Issue).CondVars()
	works := func(n *stages.Node) bool { return agentWorks(n, vars) }
	if to := machine.RejectTarget(p.Flow, p.Node, works); to != "" {
		if n, ok := e.Config.Node(to); ok {
			return n, nil, nil
		}
	}
	return nil, nil, fmt.Errorf("no stage before %s in flow %q is an agent's; say where the work goes with --to STAGE", p.Node.Path, p.Flow.Name)
}

// agentWorks reports whether n is a stage where an agent works that
// `next` would pass through for an issue with vars.
func agentWorks(n *stages.Node, vars map[string]any) bool {
	if !machine.AgentStage(n) {
		return false
	}
	if cond := n.Condition(); cond != nil {
		ok, err := cond.Eval(vars)
		return ok && err == nil
	}
	return true
}

// moveTarget is the stage of the issue's flow that a person named.
func moveTarget(e *engine.Engine, p engine.Place, stage string) (*stages.Node, []string, error) {
	n, err := flowNode(e, p, stage)
	if err != nil {
		return nil, nil, err
	}
	if n.Path == p.Issue.Stage {
		return nil, nil, fmt.Errorf("issue %d is already at %s; nothing to move (an escalated issue goes on with `agenttree resume %d --reason TEXT`)", p.Issue.ID, n.Path, p.Issue.ID)
	}
	return n, nil, nil
}

// flowNode finds the node of the issue's flow that ref names, as a hook's
// stage reference is read from where the issue is (a bare name is a
// substage of its stage first); a typo gets a suggestion.
func flowNode(e *engine.Engine, p engine.Place, ref string) (*stages.Node, error) {
	paths := strings.Join(p.Flow.Paths(), ", ")
	n, ok := e.Config.ResolveRef(p.Node, ref)
	switch {
	case ok && p.Flow.Index(n.Path) >= 0:
		return n, nil
	case ok:
		return nil, fmt.Errorf("%s is not a stage of flow %q, issue %d's flow (its stages: %s)", n.Path, p.Flow.Name, p.Issue.ID, paths)
	}
	hint := ""
	if near := stages.Closest(ref, flowNames(p.Flow)); near != "" {
		hint = fmt.Sprintf("; did you mean `%s`?", near)
	}
	return nil, fmt.Errorf("flow %q has no stage %q%s (its stages: %s)", p.Flow.Name, ref, hint, paths)
}

// flowNames are the names a stage of flow may be given by: its paths and
// its stages' names.
func flowNames(flow *stages.Flow) []string {
	var names []string
	for _, n := range flow.Nodes {
		names = append(names, n.Path)
		if n.Sub != nil && !slices.Contains(names, n.Stage.Name) {
			names = append(names, n.Stage.Name)
		}
	}
	return names
}
