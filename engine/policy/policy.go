// Package policy runs one hook for a move of an issue and decides what its
// outcome does (docs/ARCHITECTURE.md §5): the hook entry's own on_failure / on_conflict
// (an action, or a list of hooks then an action), else — for the hooks
// the controller runs — the stage's on_failure; then the retry budget of
// the failure's kind and the circuit breaker bound every step back, and a
// person is called when they are spent. The engine writes what follows.
package policy

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Routing says which failures of a list of hooks go to the stage's
// on_failure when the hook has no policy of its own: the controller's own
// work steps back; a completion hook's failure is a warning, and entry
// work it retries elsewhere (a merge at the end of the flow) is left for a
// person, but for a conflict, which the agent resolves.
type Routing int

const (
	// RouteNone: failures stand (completion hooks, people's and agents'
	// gates).
	RouteNone Routing = iota
	// RouteConflicts: only conflicts (entry hooks of a stage the
	// controller does not own).
	RouteConflicts
	// RouteAll: every failure (entry and gate hooks of a controller
	// stage, a background watch of the PR).
	RouteAll
)

func (r Routing) takes(class hooks.Class) bool {
	return r == RouteAll || (r == RouteConflicts && class == hooks.ClassConflict)
}

// Entry is how failures of node's entry hooks are routed.
func Entry(node *stages.Node) Routing {
	if node.Controller() {
		return RouteAll
	}
	return RouteConflicts
}

// Gate is how failures of node's gate hooks are routed.
func Gate(node *stages.Node) Routing {
	if node.Controller() {
		return RouteAll
	}
	return RouteNone
}

// Called says why an outcome calls a person: its escalation kind, and the
// failure that spent a budget or opened the breaker (it counts, as a step
// back would have); zero when it does not.
type Called struct {
	Kind    issues.EscalationKind
	Failure *Failure
}

// Runner runs hooks for one command on one issue, under its lock.
type Runner struct {
	Config *stages.Config
	Hooks  *hooks.Registry
	Env    *hooks.Env
	Log    *slog.Logger
	// Tx is the issue's lock: what hooks ask to keep is written through
	// it, and the budgets read from it.
	Tx *issues.Tx
	// Controller: the controller runs the hooks (the stage's on_failure
	// applies, as Routing says).
	Controller bool
	DryRun     bool
}

// Run runs h for the issue snap at node, keeps what it asked to keep (its
// documents and watch state; not in a dry run) and decides what its
// outcome does. It also says why the outcome calls a person, if it does.
func (r *Runner) Run(ctx context.Context, h *stages.HookEntry, snap *hooks.Issue, node *stages.Node, routing Routing) (hooks.Outcome, Called) {
	o := r.run(ctx, h, snap)
	if o.Kind == hooks.KindStepBack && o.Target == "" {
		o = r.stepBack(node, o, snap)
	}
	// A failure the agent cannot fix (bad credentials, an outage, a forge
	// that is not set up) is never turned into work for the agent.
	if o.Kind == hooks.KindFail && o.AgentFixable() {
		p := h.OnFailure
		if o.Class == hooks.ClassConflict && h.OnConflict != nil {
			p = h.OnConflict
		}
		switch {
		case p != nil:
			o = r.apply(ctx, h, p, o, snap, node)
		case r.Controller && node != nil && routing == RouteConflicts && o.Class == hooks.ClassConflict:
			o = r.refusedMerge(ctx, h, o, snap, node)
		case r.Controller && node != nil && routing.takes(o.Class):
			o = r.stageFailure(h, o, snap, node)
		}
	}
	if o.Kind == hooks.KindEscalate {
		if o.Class == hooks.ClassTampered {
			return o, Called{Kind: issues.EscalatedTampered}
		}
		return o, Called{Kind: issues.EscalatedHook}
	}
	return r.bound(o, snap, node)
}

// run runs one hook and keeps what it asked to keep.
func (r *Runner) run(ctx context.Context, h *stages.HookEntry, snap *hooks.Issue) hooks.Outcome {
	start := time.Now()
	o := r.Hooks.Run(ctx, h, snap, r.Env)
	r.Log.Debug("hook", "issue", snap.ID, "hook", h.Name, "outcome", o.Kind, "class", o.Class, "took", time.Since(start))
	if !r.DryRun {
		o.Warnings = append(o.Warnings, r.keep(snap, o)...)
	}
	return o
}

// keep writes what a hook asked to keep: its watch state and documents.
// A failure to write is a warning, not a hook failure.
func (r *Runner) keep(snap *hooks.Issue, o hooks.Outcome) (warnings []string) {
	for name, content := range o.Files {
		if err := r.Tx.WriteDoc(name, []byte(content)); err != nil {
			warnings = append(warnings, "could not write "+name+": "+err.Error())
		}
	}
	if len(o.Watch) == 0 {
		return warnings
	}
	if err := r.Tx.UpdateWatch(o.Watch); err != nil {
		return append(warnings, "could not save watch state: "+err.Error())
	}
	snap.Watch, _ = r.Tx.Watch()
	return warnings
}

// apply runs a failure policy: its hooks in order (a message, a rebase),
// then its action. A hook that resolves failures and passes ends the
// policy: the failed hook runs again at the next pass.
func (r *Runner) apply(ctx context.Context, h *stages.HookEntry, p *stages.FailurePolicy, o hooks.Outcome, snap *hooks.Issue, node *stages.Node) hooks.Outcome {
	failed := failureSnapshot(snap, o)
	for _, step := range p.Steps {
		so := r.run(ctx, step, failed)
		snap.Watch = failed.Watch
		o.Send = append(o.Send, so.Send...)
		o.Warnings = append(o.Warnings, so.Warnings...)
		o.Outputs = MergeOutputs(o.Outputs, so.Outputs)
		if spec, ok := r.Hooks.Hook(step.Name); ok && spec.Resolves && so.Kind == hooks.KindPass {
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
		if p.Message != "" {
			o.Message = r.render(p.Message, node, o, snap)
		}
	case stages.ActionStepBack:
		o.Kind, o.Target = hooks.KindStepBack, ""
		o = r.stepBack(node, o, snap)
		if p.Message != "" && o.Kind == hooks.KindStepBack {
			o.Message = r.render(p.Message, node, o, snap)
		}
	}
	return o
}

// failureSnapshot is snap as the hooks of a failure policy see it: with
// the outputs of the failure, and its reason as {{failure_reason}} and
// {{ci_error}}, for their messages.
func failureSnapshot(snap *hooks.Issue, o hooks.Outcome) *hooks.Issue {
	failed := *snap
	failed.Outputs = MergeOutputs(MergeOutputs(snap.Outputs, o.Outputs), failureVars(o))
	return &failed
}

// failureVars are the variables a failure gives messages: its reason, as
// failure_reason and as ci_error, another name for it (docs/CONFIG.md,
// "Placeholders").
func failureVars(o hooks.Outcome) map[string]string {
	return map[string]string{"failure_reason": o.Reason, "ci_error": o.Reason}
}

// refusedMerge is entry work refused for a conflict at a stage the
// controller does not own (a merge at the end of the flow): it goes
// through the same conflict handling as check_conflicts. With
// conflict_handling.auto_rebase the hook that resolves conflicts (rebase)
// tries first; rebased, the new head goes back to the controller stage
// that checks CI (it must pass CI and review again); else, or when the
// rebase conflicts too, the agent gets the conflict, as any failure there.
func (r *Runner) refusedMerge(ctx context.Context, h *stages.HookEntry, o hooks.Outcome, snap *hooks.Issue, node *stages.Node) hooks.Outcome {
	flow, err := r.Config.Flow(snap.Flow)
	resolver, rerr := r.Hooks.With("resolves conflicts", func(s stages.HookSpec) bool { return s.Resolves })
	if err != nil || rerr != nil || !r.Config.Conflicts.AutoRebase {
		return r.stageFailure(h, o, snap, node)
	}
	back := machine.RecheckTarget(flow, node)
	if back == "" {
		return r.stageFailure(h, o, snap, node)
	}
	ro := r.run(ctx, &stages.HookEntry{Name: resolver, Params: map[string]any{}}, snap)
	if ro.Kind != hooks.KindPass {
		if ro.Class == hooks.ClassConflict {
			o.Outputs = MergeOutputs(o.Outputs, ro.Outputs)
		}
		return r.stageFailure(h, o, snap, node)
	}
	in := ""
	if files := o.Outputs["conflict_files"]; files != "" {
		in = " in " + files
	}
	out := hooks.StepBack(back, fmt.Sprintf("%s found a conflict%s; agenttree rebased the branch onto its base, and the new head goes through CI and review again", h.Label(), in))
	out.Outputs, out.Send, out.Warnings = MergeOutputs(o.Outputs, ro.Outputs), ro.Send, append(o.Warnings, ro.Warnings...)
	if ro.Message != "" && len(ro.Send) == 0 {
		out.Send = []string{ro.Message}
	}
	return out
}

// stageFailure is a failure of a hook the controller runs, with no policy
// of its own: the stage's on_failure (or the nearest earlier one) steps
// the issue back; with none, it leads nowhere, and a person is called.
func (r *Runner) stageFailure(h *stages.HookEntry, o hooks.Outcome, snap *hooks.Issue, node *stages.Node) hooks.Outcome {
	flow, err := r.Config.Flow(snap.Flow)
	if err == nil && machine.StepBackTarget(flow, node) != "" {
		o.Kind = hooks.KindStepBack
		return r.stepBack(node, o, snap)
	}
	o.Kind = hooks.KindEscalate
	o.Reason = fmt.Sprintf("%s failed at %s and nothing in %s says where that goes (add `on_failure: {step_back_to: STAGE}` to the stage): %s",
		h.Label(), node.Path, r.Config.File, o.Reason)
	return o
}

// stepBack sends a failure to the step-back target of node (its stage's
// on_failure, else the nearest earlier one, else the nearest earlier stage
// where an agent works), with the stage's message filled in. Without a
// target it stays a failure.
func (r *Runner) stepBack(node *stages.Node, o hooks.Outcome, snap *hooks.Issue) hooks.Outcome {
	target, msg := "", ""
	if node != nil {
		if flow, err := r.Config.Flow(snap.Flow); err == nil {
			target = machine.BareStepBackTarget(flow, node, snap.CondVars())
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
		o.Message = r.render(msg, node, o, snap)
	case o.Message == "":
		o.Message = o.Reason
	}
	return o
}

// render fills in the message of a step back from the failure o at node:
// the issue's variables, the failure's outputs and reason, and which try
// this is of how many.
func (r *Runner) render(msg string, node *stages.Node, o hooks.Outcome, snap *hooks.Issue) string {
	vars := snap.MessageVars()
	maps.Copy(vars, o.Outputs)
	maps.Copy(vars, failureVars(o))
	if o.Class != "" && !r.DryRun && node != nil {
		if iss, err := r.Tx.Get(); err == nil {
			vars["attempt"] = strconv.Itoa(iss.Attempts[string(o.Class)] + 1)
			vars["max_retries"] = strconv.Itoa(Budget(r.Config, node, o.Class))
		}
	}
	return stages.Render(msg, vars)
}

// MergeOutputs is a with b's outputs added (b's win).
func MergeOutputs(a, b map[string]string) map[string]string {
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
