package engine

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/engine/breaker"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// routing says which failures of a list of hooks go to the stage's
// on_failure when the hook has no policy of its own: the controller's own
// work steps back; a completion hook's failure is a warning, and entry
// work it retries elsewhere (a merge at the end of the flow) is left for a
// person, but for a conflict, which the agent resolves.
type routing int

const (
	// routeNone: failures stand (completion hooks, people's and agents'
	// gates).
	routeNone routing = iota
	// routeConflicts: only conflicts (entry hooks of a stage the
	// controller does not own).
	routeConflicts
	// routeAll: every failure (entry and gate hooks of a controller
	// stage, a background watch of the PR).
	routeAll
)

func (r routing) takes(class hooks.Class) bool {
	return r == routeAll || (r == routeConflicts && class == hooks.ClassConflict)
}

// entryRouting is how failures of node's entry hooks are routed.
func entryRouting(node *stages.Node) routing {
	if node.Controller() {
		return routeAll
	}
	return routeConflicts
}

// gateRouting is how failures of node's gate hooks are routed.
func gateRouting(node *stages.Node) routing {
	if node.Controller() {
		return routeAll
	}
	return routeNone
}

// called says why an outcome calls a person: its escalation kind, and the
// failure that spent a budget or opened the breaker; zero when it does not.
type called struct {
	kind    issues.EscalationKind
	failure *failure
}

// route decides what a hook's outcome does (DESIGN §5, issue: "failure
// handling, declared in YAML"): the entry's own on_conflict / on_failure
// policy; else, for the hooks the controller runs, the stage's
// on_failure; then the retry budget and the circuit breaker bound any step
// back. It returns the outcome and, for a call for a person, why.
func (t *transition) route(h *stages.HookEntry, o hooks.Outcome, snap *hooks.Issue, node *stages.Node, r routing) (hooks.Outcome, called) {
	if o.Kind == hooks.KindStepBack && o.Target == "" {
		o = t.stepBack(node, o, snap)
	}
	// A failure the agent cannot fix (bad credentials, an outage, a forge
	// that is not set up) is never turned into work for the agent.
	if o.Kind == hooks.KindFail && o.AgentFixable() {
		policy := h.OnFailure
		if o.Class == hooks.ClassConflict && h.OnConflict != nil {
			policy = h.OnConflict
		}
		switch {
		case policy != nil:
			o = t.applyPolicy(h, policy, o, snap, node)
		case t.actor.Kind == ActorController && node != nil && r.takes(o.Class):
			o = t.stageFailure(h, o, snap, node)
		}
	}
	if o.Kind == hooks.KindEscalate {
		return o, called{kind: issues.EscalatedHook}
	}
	return t.bound(o, snap, node)
}

// applyPolicy runs a failure policy: its hooks in order (a message, a
// rebase), then its action. A hook that resolves failures and passes ends
// the policy: the failed hook runs again at the next pass.
func (t *transition) applyPolicy(h *stages.HookEntry, p *stages.FailurePolicy, o hooks.Outcome, snap *hooks.Issue, node *stages.Node) hooks.Outcome {
	for _, step := range p.Steps {
		so := t.e.Hooks.Run(t.ctx, step, snap, t.e.hookEnv(t.dryRun))
		if !t.dryRun {
			so.Warnings = append(so.Warnings, t.record(snap, so)...)
		}
		o.Send = append(o.Send, so.Send...)
		o.Warnings = append(o.Warnings, so.Warnings...)
		o.Outputs = mergeOutputs(o.Outputs, so.Outputs)
		if spec, ok := t.e.Hooks.Hook(step.Name); ok && spec.Resolves && so.Kind == hooks.KindPass {
			again := hooks.Pending(0, fmt.Sprintf("%s failed (%s); %s dealt with it, so it runs again", h.Label(), o.Reason, step.Label()))
			again.Outputs, again.Send, again.Warnings = o.Outputs, o.Send, o.Warnings
			if so.Message != "" {
				again.Send = append(again.Send, so.Message)
			}
			return again
		}
		if so.Blocking() {
			o.Warnings = append(o.Warnings, fmt.Sprintf("%s (on_failure of %s): %s", step.Label(), h.Label(), so.Reason))
		}
	}
	switch p.Action {
	case stages.ActionIgnore:
		return hooks.Outcome{Kind: hooks.KindPass, Outputs: o.Outputs, Send: o.Send,
			Warnings: append(o.Warnings, h.Label()+" failed (ignored): "+o.Reason)}
	case stages.ActionEscalate:
		o.Kind = hooks.KindEscalate
	case stages.ActionStepBackTo:
		o.Kind, o.Target, o.Message = hooks.KindStepBack, p.Target, o.Reason
	case stages.ActionStepBack:
		o.Kind, o.Target = hooks.KindStepBack, ""
		return t.stepBack(node, o, snap)
	}
	return o
}

// stageFailure is a failure of a hook the controller runs, with no policy
// of its own: the stage's on_failure (or the nearest earlier one) steps
// the issue back; with none, it leads nowhere, and a person is called.
func (t *transition) stageFailure(h *stages.HookEntry, o hooks.Outcome, snap *hooks.Issue, node *stages.Node) hooks.Outcome {
	flow, err := t.e.Config.Flow(snap.Flow)
	if err == nil && machine.StepBackTarget(flow, node) != "" {
		o.Kind = hooks.KindStepBack
		return t.stepBack(node, o, snap)
	}
	o.Kind = hooks.KindEscalate
	o.Reason = fmt.Sprintf("%s failed at %s and nothing in %s says where that goes (add `on_failure: {step_back_to: STAGE}` to the stage): %s",
		h.Label(), node.Path, t.e.Config.File, o.Reason)
	return o
}

// stepBack sends a failure to the step-back target of node (its stage's
// on_failure, else the nearest earlier one), with the stage's message
// filled in. Without a target it stays a failure.
func (t *transition) stepBack(node *stages.Node, o hooks.Outcome, snap *hooks.Issue) hooks.Outcome {
	target, msg := "", ""
	if node != nil {
		if flow, err := t.e.Config.Flow(snap.Flow); err == nil {
			target = machine.StepBackTarget(flow, node)
		}
		if of := node.OnFailure(); of != nil {
			msg = of.Message
		}
	}
	if target == "" {
		o.Kind = hooks.KindFail
		if node != nil {
			o.Reason += fmt.Sprintf(" (no step back: %s has no on_failure.step_back_to)", node.Path)
		}
		return o
	}
	o.Target = target
	switch {
	case msg != "":
		vars := snap.MessageVars()
		maps.Copy(vars, o.Outputs)
		vars["failure_reason"] = o.Reason
		if o.Class != "" && !t.dryRun {
			if iss, err := t.tx.Get(); err == nil {
				vars["attempt"] = strconv.Itoa(iss.Attempts[string(o.Class)] + 1)
				vars["max_retries"] = strconv.Itoa(t.budget(node, o.Class))
			}
		}
		o.Message = stages.Render(msg, vars)
	case o.Message == "":
		o.Message = o.Reason
	}
	return o
}

// bound lets a step back for a failure through while its retry budget
// lasts and the circuit breaker is not open; otherwise the issue stops
// for a person.
func (t *transition) bound(o hooks.Outcome, snap *hooks.Issue, node *stages.Node) (hooks.Outcome, called) {
	f := failureOf(o, snap)
	if f == nil || t.dryRun {
		return o, called{}
	}
	iss, err := t.tx.Get()
	if err != nil {
		return o, called{}
	}
	limit := t.budget(node, f.class)
	if used := iss.Attempts[string(f.class)]; used >= limit {
		o.Kind = hooks.KindEscalate
		o.Reason = fmt.Sprintf("%s %d times, the budget of step backs for it (%d); last: %s", classWords(f.class), used+1, limit, o.Reason)
		return o, called{kind: issues.EscalatedBudget, failure: f}
	}
	if _, open, why := breaker.Record(deref(iss.Breaker), f.head, f.failing, t.e.Config.CircuitBreaker); open {
		o.Kind = hooks.KindEscalate
		o.Reason = "circuit breaker open: " + why + "; last: " + o.Reason
		return o, called{kind: issues.EscalatedBreaker, failure: f}
	}
	return o, called{}
}

func (t *transition) budget(node *stages.Node, class hooks.Class) int {
	return Budget(t.e.Config, node, class)
}

// Budget is how many step backs for failures of class node allows: the
// stage's on_failure.max_retries, else the config's budget for the kind.
func Budget(cfg *stages.Config, node *stages.Node, class hooks.Class) int {
	if node != nil {
		if of := node.OnFailure(); of != nil && of.MaxRetries > 0 {
			return of.MaxRetries
		}
	}
	if class == hooks.ClassConflict {
		return cfg.Conflicts.MaxConflictRetries
	}
	return cfg.CIPolling.MaxRetries
}

// failure is what a step back for a failed hook counts against: its
// kind's budget, and the breaker's view of the head and what failed on it.
type failure struct {
	class    hooks.Class
	reason   string
	head     string
	failing  []breaker.Failure
	feedback string
}

// failureOf is the failure a step back is for, or nil for a step back a
// hook asked for on purpose (it has no class).
func failureOf(o hooks.Outcome, snap *hooks.Issue) *failure {
	if o.Kind != hooks.KindStepBack || o.Class == "" {
		return nil
	}
	f := &failure{class: o.Class, reason: o.Reason, head: cmp.Or(o.Outputs["head_sha"], snap.HeadSHA)}
	// How each check failed (failure_details: "check<TAB>first lines"),
	// else the failure's reason: the breaker tells failures apart by it.
	for _, line := range strings.Split(o.Outputs["failure_details"], "\n") {
		if check, detail, ok := strings.Cut(line, "\t"); ok {
			f.failing = append(f.failing, breaker.Failure{Check: check, Detail: detail})
		}
	}
	if len(f.failing) == 0 {
		for _, name := range strings.Split(o.Outputs["failed_checks"], ",") {
			if name = strings.TrimSpace(name); name != "" {
				f.failing = append(f.failing, breaker.Failure{Check: name, Detail: o.Reason})
			}
		}
	}
	if len(f.failing) == 0 {
		f.failing = []breaker.Failure{{Check: string(o.Class), Detail: o.Reason}}
	}
	for _, name := range slices.Sorted(maps.Keys(o.Files)) {
		if o.Files[name] != "" {
			f.feedback = name
			break
		}
	}
	return f
}

// count records a step back for f on the issue: its budget and the
// breaker, in the write of the move.
func (t *transition) count(cur *issues.Issue, f *failure) {
	if cur.Attempts == nil {
		cur.Attempts = map[string]int{}
	}
	cur.Attempts[string(f.class)]++
	applyOutputs(cur, map[string]string{notice.OutClass: string(f.class), notice.OutFeedback: f.feedback})
	next, _, _ := breaker.Record(deref(cur.Breaker), f.head, f.failing, t.e.Config.CircuitBreaker)
	cur.Breaker = &next
}

func classWords(c hooks.Class) string {
	switch c {
	case hooks.ClassCIFailed:
		return "CI failed"
	case hooks.ClassConflict:
		return "the PR conflicted"
	case hooks.ClassNoNewCI:
		return "no CI started after a push"
	case hooks.ClassPollingTimeout:
		return "CI did not finish in time"
	}
	return "failed (" + string(c) + ")"
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func mergeOutputs(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// stepBackOf describes the step back h, just written to cur.
func (t *transition) stepBackOf(cur *issues.Issue, h hop) *StepBack {
	sb := &StepBack{From: h.from.Path, To: h.to.Path, Reason: h.reason, Message: h.reason}
	if f := h.failure; f != nil {
		sb.Reason, sb.Class = f.reason, string(f.class)
		for _, fl := range f.failing {
			if f.class == hooks.ClassCIFailed {
				sb.Checks = append(sb.Checks, fl.Check)
			}
		}
		sb.Attempt, sb.MaxRetries = cur.Attempts[string(f.class)], t.budget(h.from, f.class)
		if f.feedback != "" {
			sb.Feedback = filepath.Join(t.e.Store.Dir(cur.ID), f.feedback)
		}
	}
	return sb
}
