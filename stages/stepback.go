package stages

import "cmp"

// AgentWorks reports whether an agent works at n, whatever its condition
// says: not the controller's, a review, a parking lot, a stage reached
// only by redirect, or an end.
func (n *Node) AgentWorks() bool {
	return !n.Controller() && !n.HumanReview() && !n.ParkingLot() && !n.RedirectOnly() && n.Terminal() == TerminalNone
}

// DeclaredStepBack is where a failure at the node path of f steps the
// issue back to by the config's word: the node's own
// on_failure.step_back_to, else that of the nearest node before it that
// declares one; "" when none does.
func (f *Flow) DeclaredStepBack(path string) string {
	for i := f.Index(path); i >= 0; i-- {
		if of := f.Nodes[i].OnFailure(); of != nil && of.StepBackTo != "" {
			return of.StepBackTo
		}
	}
	return ""
}

// AgentsBefore lists the nodes before path in f where an agent works
// (AgentWorks), nearest first, up to the first that has no condition: the
// ones a bare step_back may go to, by what the variables say of
// their conditions.
func (f *Flow) AgentsBefore(path string) []*Node {
	var out []*Node
	for i := f.Index(path) - 1; i >= 0; i-- {
		if n := f.Nodes[i]; n.AgentWorks() {
			out = append(out, n)
			if n.Condition() == nil {
				break
			}
		}
	}
	return out
}

// BareStepBack is where a bare `step_back` (a hook's on_failure,
// on_conflict or on_ci_failure that names no stage) at path sends an
// issue with vars (nil: whatever the conditions say): the declared step
// back (DeclaredStepBack), else the nearest earlier node where an agent
// works that `next` would not skip, whose agent is told why; "" when
// there is neither, which the loader refuses (docs/CONFIG.md, "Failure
// policies").
func (f *Flow) BareStepBack(path string, vars map[string]any) string {
	if to := f.DeclaredStepBack(path); to != "" {
		return to
	}
	agents := f.AgentsBefore(path)
	for _, n := range agents {
		if c := n.Condition(); vars == nil || c == nil {
			return n.Path
		} else if ok, err := c.Eval(vars); ok && err == nil {
			return n.Path
		}
	}
	if len(agents) > 0 {
		return agents[0].Path // every one would be skipped: the nearest
	}
	return ""
}

// IsBareStepBack reports whether p steps back without naming a stage.
func (p *FailurePolicy) IsBareStepBack() bool { return p != nil && p.Action == ActionStepBack }

// Policies lists the failure policies h has: on_failure, on_conflict and
// on_ci_failure, by their keys; those it does not have are left out.
func (h *HookEntry) Policies() []NamedPolicy {
	var out []NamedPolicy
	for _, p := range []NamedPolicy{{"on_failure", h.OnFailure}, {"on_conflict", h.OnConflict}, {"on_ci_failure", h.OnCIFailure}} {
		if p.Policy != nil {
			out = append(out, p)
		}
	}
	return out
}

// NamedPolicy is a failure policy of a hook entry and the key it is
// written under.
type NamedPolicy struct {
	Key    string
	Policy *FailurePolicy
}

// StepBackRoute says where a bare `step_back` of a hook entry sends an
// issue on one node of a flow, for validate to show.
type StepBackRoute struct {
	Flow   string `json:"flow"`
	Node   string `json:"stage"`
	Hook   string `json:"hook"`
	Policy string `json:"policy"` // on_failure, on_conflict or on_ci_failure
	To     string `json:"to"`
	// Declared says To is an on_failure.step_back_to of the config; else
	// it is the nearest earlier stage where an agent works.
	Declared bool `json:"declared"`
	Pos      Pos  `json:"pos"`
}

// BareStepBacks lists where each bare `step_back` of the config sends an
// issue, node by node of each flow, whatever the variables say
// (BareStepBack with nil); one with nowhere to go is left out (the loader
// refuses it). Each flow is read in one pass.
func (c *Config) BareStepBacks() []StepBackRoute {
	var out []StepBackRoute
	for _, f := range c.Flows {
		declared, agent := "", ""
		for _, n := range f.Nodes {
			if of := n.OnFailure(); of != nil && of.StepBackTo != "" {
				declared = of.StepBackTo
			}
			if to := cmp.Or(declared, agent); to != "" {
				out = append(out, bareRoutes(f, n, to, declared != "")...)
			}
			if n.AgentWorks() {
				agent = n.Path
			}
		}
	}
	return out
}

// bareRoutes are the routes of the bare step_backs of n's hooks, to to.
func bareRoutes(f *Flow, n *Node, to string, declared bool) []StepBackRoute {
	var out []StepBackRoute
	for _, h := range n.EveryHook() {
		for _, p := range h.Policies() {
			if p.Policy.IsBareStepBack() {
				out = append(out, StepBackRoute{Flow: f.Name, Node: n.Path, Hook: h.Label(), Policy: p.Key, To: to, Declared: declared, Pos: p.Policy.Pos})
			}
		}
	}
	return out
}
