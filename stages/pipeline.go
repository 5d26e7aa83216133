package stages

import (
	"fmt"
	"strings"
)

// Node is one place an issue can be: a stage without substages, or a
// substage (`implement.code`).
type Node struct {
	Path  string
	Stage *Stage
	Sub   *Substage // nil for a stage without substages
}

func (n *Node) own() *Settings {
	if n.Sub != nil {
		return &n.Sub.Settings
	}
	return &n.Stage.Settings
}

// Role is who acts in the node: an agent role, "controller" or "human".
func (n *Node) Role() Role {
	if n.Sub != nil && n.Sub.Role != "" {
		return n.Sub.Role
	}
	if n.Stage.Role != "" {
		return n.Stage.Role
	}
	return RoleDeveloper
}

// Controller reports whether the host controller owns the node.
func (n *Node) Controller() bool { return n.Role() == RoleController }

// HumanReview reports whether only a human may move the issue on. A
// human_review stage makes every one of its substages a review too.
func (n *Node) HumanReview() bool {
	return n.Stage.HumanReview || (n.Sub != nil && n.Sub.HumanReview) || n.Role() == RoleHuman
}

// ParkingLot reports whether issues wait here until someone starts them.
func (n *Node) ParkingLot() bool {
	return n.Stage.ParkingLot || (n.Sub != nil && n.Sub.ParkingLot)
}

// Terminal says how the node ends an issue, TerminalNone if it does not.
func (n *Node) Terminal() Terminal {
	if n.Sub != nil && n.Sub.Terminal != "" {
		return n.Sub.Terminal
	}
	return n.Stage.Terminal
}

// RedirectOnly reports whether `next` skips the node.
func (n *Node) RedirectOnly() bool {
	return n.Stage.RedirectOnly || (n.Sub != nil && n.Sub.RedirectOnly)
}

// Condition is the node's own condition, else its stage's.
func (n *Node) Condition() *Condition {
	if n.Sub != nil && n.Sub.Condition != nil {
		return n.Sub.Condition
	}
	return n.Stage.Condition
}

// Skill is the instructions file printed on entry.
func (n *Node) Skill() string {
	if n.Sub != nil && n.Sub.Skill != "" {
		return n.Sub.Skill
	}
	return n.Stage.Skill
}

// OnFailure is the node's own step-back rule, else its stage's.
func (n *Node) OnFailure() *OnFailure {
	if n.Sub != nil && n.Sub.OnFailure != nil {
		return n.Sub.OnFailure
	}
	return n.Stage.OnFailure
}

// Leaving returns what guards leaving n for to: the output files to check
// and the pre_completion hooks, in order. A stage's own keys apply when the
// issue leaves the stage, after its substage's.
func (n *Node) Leaving(to *Node) (outputs []string, hooks []*HookEntry) {
	s := n.own()
	if s.Output != "" {
		outputs = append(outputs, s.Output)
	}
	hooks = append(hooks, s.PreCompletion...)
	if n.Sub != nil && (to == nil || to.Stage != n.Stage) {
		if n.Stage.Output != "" {
			outputs = append(outputs, n.Stage.Output)
		}
		hooks = append(hooks, n.Stage.PreCompletion...)
	}
	return outputs, hooks
}

// Completed returns the post_completion hooks that run after leaving n.
func (n *Node) Completed(to *Node) []*HookEntry {
	hooks := append([]*HookEntry(nil), n.own().PostCompletion...)
	if n.Sub != nil && (to == nil || to.Stage != n.Stage) {
		hooks = append(hooks, n.Stage.PostCompletion...)
	}
	return hooks
}

// Entering returns the post_start hooks that run on entering n from from.
// A stage's own post_start runs first, when the issue enters the stage.
func (n *Node) Entering(from *Node) []*HookEntry {
	var hooks []*HookEntry
	if n.Sub != nil && (from == nil || from.Stage != n.Stage) {
		hooks = append(hooks, n.Stage.PostStart...)
	}
	return append(hooks, n.own().PostStart...)
}

// Flow returns the named flow, or the default flow for "".
func (c *Config) Flow(name string) (*Flow, error) {
	if name == "" {
		name = c.DefaultFlow
	}
	for _, f := range c.Flows {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("no flow named %q in %s (flows: %s)", name, c.File, strings.Join(c.FlowNames(), ", "))
}

// FlowNames lists the flows in declaration order.
func (c *Config) FlowNames() []string {
	out := make([]string, len(c.Flows))
	for i, f := range c.Flows {
		out[i] = f.Name
	}
	return out
}

// Node finds a node by dot path. A bare stage name with substages finds its
// first substage.
func (c *Config) Node(path string) (*Node, bool) {
	stage, sub, _ := strings.Cut(path, ".")
	s := c.Stage(stage)
	switch {
	case s == nil:
		return nil, false
	case len(s.Substages) == 0 && sub != "":
		return nil, false
	case len(s.Substages) == 0:
		return &Node{Path: s.Name, Stage: s}, true
	case sub == "":
		return substageNode(s, s.Substages[0]), true
	}
	if ss := s.Substage(sub); ss != nil {
		return substageNode(s, ss), true
	}
	return nil, false
}

// ResolveRef resolves a stage reference written in a hook or on_failure of
// node from. A bare name is first a substage of from's stage, then a stage.
func (c *Config) ResolveRef(from *Node, ref string) (*Node, bool) {
	if from != nil && from.Stage != nil && !strings.Contains(ref, ".") {
		if ss := from.Stage.Substage(ref); ss != nil {
			return substageNode(from.Stage, ss), true
		}
	}
	return c.Node(ref)
}

// Next returns the first node after path that `next` may move to: not
// redirect_only, and whose condition holds for vars. It returns nil when
// path is the last such node. Conditions that fail to evaluate count as
// false and are reported in skipped.
func (f *Flow) Next(path string, vars map[string]any) (next *Node, skipped []string, err error) {
	i := f.Index(path)
	if i < 0 {
		return nil, nil, fmt.Errorf("stage %q is not part of flow %q", path, f.Name)
	}
	for _, n := range f.Nodes[i+1:] {
		if n.RedirectOnly() {
			continue
		}
		if cond := n.Condition(); cond != nil {
			ok, cerr := cond.Eval(vars)
			if !ok {
				why := n.Path + " (condition " + cond.Src + " is false)"
				if cerr != nil {
					why = n.Path + " (" + cerr.Error() + ")"
				}
				skipped = append(skipped, why)
				continue
			}
		}
		return n, skipped, nil
	}
	return nil, skipped, nil
}

// Successors lists every node `next` could move to from path, whatever the
// conditions: the edges the state machine allows.
func (f *Flow) Successors(path string) []*Node {
	i := f.Index(path)
	if i < 0 {
		return nil
	}
	var out []*Node
	for _, n := range f.Nodes[i+1:] {
		if n.RedirectOnly() {
			continue
		}
		out = append(out, n)
		if n.Condition() == nil {
			break
		}
	}
	return out
}

// Hooks lists the entry and gate hooks of n, its stage's included: the
// hooks whose failures may need somewhere to go.
func (n *Node) Hooks() []*HookEntry {
	hooks := append(append([]*HookEntry(nil), n.Stage.PostStart...), n.Stage.PreCompletion...)
	if n.Sub != nil {
		hooks = append(append(hooks, n.Sub.PostStart...), n.Sub.PreCompletion...)
	}
	return hooks
}
