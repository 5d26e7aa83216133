package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// transition is one move of one issue, made while holding its lock: every
// write goes through tx, so no other agenttree process interleaves.
type transition struct {
	e     *Engine
	ctx   context.Context
	tx    *Tx
	actor Actor
	res   *Result
	flow  *stages.Flow
	m     *Machine
}

func (t *transition) dryRun() bool { return t.res.DryRun }

// snapshot is the hooks' view of iss with the watch state held by the Tx.
func (t *transition) snapshot(iss *Issue) *hooks.Issue {
	s := t.e.Snapshot(iss)
	w, err := t.tx.Watch()
	if err != nil {
		t.e.Log.Warn("unreadable watch state; starting afresh", "issue", iss.ID, "err", err)
		w = map[string]string{}
	}
	s.Watch = w
	return s
}

func (t *transition) block(reasons ...string) {
	t.res.Status = StatusBlocked
	t.res.Reasons = append(t.res.Reasons, reasons...)
}

// conflict reports that another process moved the issue first.
func (t *transition) conflict(err error) {
	t.res.Conflict = true
	t.block(err.Error())
}

// approvePR records a person's approval on the PR where the forge takes it
// from agenttree, so the review gate (pr_approved) sees it.
func (t *transition) approvePR(iss *Issue) {
	ap, ok := forge.As[forge.Approver](t.e.Forge)
	if !ok || iss.PRNumber == 0 || t.dryRun() {
		return
	}
	if err := ap.Approve(t.ctx, iss.PRNumber, string(ActorHuman)); err != nil {
		t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("could not record the approval on PR #%d: %v", iss.PRNumber, err))
	}
}

// reapprove records a person's approval of the PR as it is now, for an
// issue whose entry hooks (a merge) refused commits pushed after the
// review. It is a history entry, not a move.
func (t *transition) reapprove(iss *Issue, node *stages.Node) (*Issue, error) {
	if t.dryRun() {
		return iss, nil
	}
	t.approvePR(iss)
	o := t.runHook(&stages.HookEntry{Name: "pr_approved", Params: map[string]any{}}, t.snapshot(iss), node)
	if o.Kind != hooks.KindPass {
		t.res.Warnings = append(t.res.Warnings, "the PR is still not approved: "+o.Reason)
		return iss, nil
	}
	cur, err := t.tx.Update(iss.Version, func(cur *Issue) error {
		applyOutputs(cur, o.Outputs)
		cur.History = append(cur.History, HistoryEntry{From: cur.Stage, To: cur.Stage, Kind: KindApprove, Actor: t.actor.Kind,
			Reason: "approved the PR again at " + o.Outputs["approved_sha"], At: time.Now().UTC().Truncate(time.Second)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.res.Version = cur.Version
	t.res.Notes = append(t.res.Notes, "approved the PR at its current head")
	return cur, nil
}

// gateResult is what the gate of a transition found.
type gateResult struct {
	reasons []string
	outputs map[string]string
	// jump is set when a hook sent the issue elsewhere instead.
	jump *hooks.Outcome
}

// gate checks what guards leaving node for to: output files, then the
// pre_completion hooks in order. Every failure is collected; a hook that
// redirects stops the gate.
func (t *transition) gate(snap *hooks.Issue, node, to *stages.Node) gateResult {
	g := gateResult{outputs: map[string]string{}}
	outputs, entries := node.Leaving(to)
	for _, f := range outputs {
		if _, err := os.Stat(filepath.Join(snap.Dir, f)); err != nil {
			g.reasons = append(g.reasons, fmt.Sprintf("%s: output file %s is missing; write it in %s", node.Path, f, snap.Dir))
		}
	}
	for _, h := range entries {
		o := t.collect(h, snap, node, g.outputs)
		switch o.Kind {
		case hooks.KindFail, hooks.KindEscalate:
			g.reasons = append(g.reasons, o.Reason)
		case hooks.KindPending:
			g.reasons = append(g.reasons, fmt.Sprintf("%s: still waiting (%s)", h.Label(), o.Reason))
		case hooks.KindRedirect, hooks.KindStepBack, hooks.KindRollback:
			g.jump = &o
			return g
		}
	}
	return g
}

// collect runs one hook of a sequence: its warnings and notes go to the
// result, its outputs into outputs and into what the later hooks see.
func (t *transition) collect(h *stages.HookEntry, snap *hooks.Issue, node *stages.Node, outputs map[string]string) hooks.Outcome {
	o := t.runHook(h, snap, node)
	t.res.Warnings = append(t.res.Warnings, o.Warnings...)
	if o.Message != "" && o.Kind == hooks.KindPass {
		t.res.Notes = append(t.res.Notes, o.Message)
	}
	for k, v := range o.Outputs {
		outputs[k] = v
		snap.Outputs = withOutput(snap.Outputs, k, v)
	}
	return o
}

// runHook runs one hook, applies its on_failure policy and records what it
// asked to keep (not in a dry run).
func (t *transition) runHook(h *stages.HookEntry, snap *hooks.Issue, node *stages.Node) hooks.Outcome {
	start := time.Now()
	o := t.e.Hooks.Run(t.ctx, h, snap, t.e.hookEnv(t.dryRun()))
	t.e.Log.Debug("hook", "issue", snap.ID, "hook", h.Name, "outcome", o.Kind, "class", o.Class, "took", time.Since(start))
	if !t.dryRun() {
		t.record(snap, &o)
	}
	if o.Kind == hooks.KindStepBack && o.Target == "" {
		return t.stepBack(node, o, snap)
	}
	// A failure the agent cannot fix (bad credentials, an outage, a forge
	// that is not set up) is never turned into work for the agent.
	if o.Kind != hooks.KindFail || h.OnFailure == nil || !o.AgentFixable() {
		return o
	}
	switch h.OnFailure.Action {
	case "ignore":
		return hooks.Outcome{Kind: hooks.KindPass, Outputs: o.Outputs, Warnings: append(o.Warnings, h.Label()+" failed (ignored): "+o.Reason)}
	case "escalate":
		o.Kind = hooks.KindEscalate
	case "step_back_to":
		o.Kind, o.Target = hooks.KindStepBack, h.OnFailure.Target
		o.Message = o.Reason
	case "step_back":
		o.Kind, o.Target = hooks.KindStepBack, ""
		return t.stepBack(node, o, snap)
	}
	return o
}

// stepBack sends a failure to the stage's on_failure target, with the
// stage's message filled in. Without a target it stays a failure.
func (t *transition) stepBack(node *stages.Node, o hooks.Outcome, snap *hooks.Issue) hooks.Outcome {
	var of *stages.OnFailure
	if node != nil {
		of = node.OnFailure()
	}
	if of == nil || of.StepBackTo == "" {
		o.Kind = hooks.KindFail
		if node != nil {
			o.Reason += fmt.Sprintf(" (no step back: %s has no on_failure.step_back_to)", node.Path)
		}
		return o
	}
	o.Target = of.StepBackTo
	if of.Message != "" {
		vars := snap.MessageVars()
		for k, v := range o.Outputs {
			vars[k] = v
		}
		vars["failure_reason"] = o.Reason
		o.Message = stages.Render(of.Message, vars)
	} else if o.Message == "" {
		o.Message = o.Reason
	}
	return o
}

// record writes what a hook asked to keep: its watch state and documents.
// A failure to write is a warning on the outcome, not a hook failure.
func (t *transition) record(snap *hooks.Issue, o *hooks.Outcome) {
	for name, content := range o.Files {
		if err := t.tx.WriteDoc(name, []byte(content)); err != nil {
			o.Warnings = append(o.Warnings, "could not write "+name+": "+err.Error())
		}
	}
	if len(o.Watch) == 0 {
		return
	}
	if err := t.tx.UpdateWatch(o.Watch); err != nil {
		o.Warnings = append(o.Warnings, "could not save watch state: "+err.Error())
		return
	}
	snap.Watch, _ = t.tx.Watch()
}

func withOutput(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// advance runs the gate of node→to and, if it passes, commits the move,
// runs the completion hooks and enters the new stage.
func (t *transition) advance(iss *Issue, node, to *stages.Node, kind string) {
	res := t.res
	res.To = to.Path
	if err := t.m.Check(t.ctx, node.Path, to.Path, kind); err != nil {
		t.block(err.Error())
		return
	}
	snap := t.snapshot(iss)
	g := t.gate(snap, node, to)
	reason := "gates passed"
	switch {
	case g.jump != nil:
		target, ok := t.e.Config.Node(g.jump.Target)
		if !ok {
			t.block(fmt.Sprintf("a hook sent the issue to unknown stage %q", g.jump.Target))
			return
		}
		to, kind, reason = target, jumpKind(g.jump.Kind), jumpReason(*g.jump)
		if err := t.m.Check(t.ctx, node.Path, to.Path, kind); err != nil {
			t.block(err.Error())
			return
		}
		// What else the gate found is worth knowing on the way back.
		res.Reasons = append(res.Reasons, reason)
		res.Reasons = append(res.Reasons, g.reasons...)
	case len(g.reasons) > 0:
		t.block(g.reasons...)
		return
	default:
		back, why, stop := t.decideRollback(snap, node, to)
		if stop {
			res.Status = StatusWaiting
			res.Reasons = append(res.Reasons, why)
			return
		}
		if back != nil {
			if err := t.m.Check(t.ctx, node.Path, back.Path, KindRollback); err != nil {
				t.block(err.Error())
				return
			}
			to, kind, reason = back, KindRollback, why
			res.Reasons = append(res.Reasons, why)
		}
	}
	res.To, res.Kind = to.Path, kind
	if t.dryRun() {
		res.Status = StatusAdvanced
		return
	}
	cur, err := t.commit(iss, to.Path, kind, reason, g.outputs)
	if err != nil {
		t.block(err.Error())
		return
	}
	res.Status, res.Version = StatusAdvanced, cur.Version
	if kind == KindAdvance || kind == KindApprove {
		cur, to = t.complete(cur, node, to)
	}
	t.enter(cur, node, to, 0)
}

// decideRollback runs the rollback hooks of node's post_completion before
// the move is committed, so a review loop sends the issue back instead of
// forward in one step. A spent rollback budget stops an agent (waiting on a
// person); a person's `next` is the decision to move on.
func (t *transition) decideRollback(snap *hooks.Issue, node, to *stages.Node) (back *stages.Node, why string, stop bool) {
	for _, h := range node.Completed(to) {
		if h.Name != "rollback" {
			continue
		}
		o := t.runHook(h, snap, node)
		t.res.Warnings = append(t.res.Warnings, o.Warnings...)
		switch o.Kind {
		case hooks.KindRollback:
			target, ok := t.e.Config.Node(o.Target)
			if !ok {
				return nil, fmt.Sprintf("rollback names unknown stage %q", o.Target), true
			}
			return target, o.Reason, false
		case hooks.KindFail:
			if t.actor.Kind == ActorHuman {
				t.res.Warnings = append(t.res.Warnings, o.Reason+" (moving on: a person decided)")
				continue
			}
			return nil, o.Reason, true
		}
	}
	return nil, "", false
}

// jumpReason is what the history says of a redirect: a step back's
// message for the agent, else the hook's reason.
func jumpReason(o hooks.Outcome) string {
	if o.Kind == hooks.KindStepBack && o.Message != "" {
		return o.Message
	}
	return o.Reason
}

func jumpKind(k hooks.Kind) string {
	switch k {
	case hooks.KindStepBack:
		return KindStepBack
	case hooks.KindRollback:
		return KindRollback
	}
	return KindRedirect
}

// commit writes the move, if nobody moved the issue since it was read. When
// the new stage has entry hooks, the same write marks them pending.
func (t *transition) commit(iss *Issue, to, kind, reason string, outputs map[string]string) (*Issue, error) {
	fromNode, _ := t.e.Config.Node(iss.Stage)
	toNode, _ := t.e.Config.Node(to)
	cur, err := t.tx.Update(iss.Version, func(cur *Issue) error {
		from := cur.Stage
		if from != iss.Stage {
			return &ConflictError{ID: iss.ID, Expected: iss.Version, Found: cur.Version}
		}
		cur.Stage = to
		cur.EntryPending = nil
		if toNode != nil && !toNode.Controller() && len(toNode.Entering(fromNode)) > 0 {
			cur.EntryPending = &EntryPending{Stage: to, From: from}
		}
		applyOutputs(cur, outputs)
		cur.History = append(cur.History, HistoryEntry{From: from, To: to, Kind: kind, Actor: t.actor.Kind, Reason: reason, At: time.Now().UTC().Truncate(time.Second)})
		return nil
	})
	var ce *ConflictError
	if errors.As(err, &ce) {
		t.res.Conflict = true
	}
	return cur, err
}

// applyOutputs keeps hook outputs on the issue (an empty value removes
// one); the PR facts also fill the issue's own fields.
func applyOutputs(iss *Issue, outputs map[string]string) {
	for k, v := range outputs {
		if v == "" {
			delete(iss.Outputs, k)
			continue
		}
		if iss.Outputs == nil {
			iss.Outputs = map[string]string{}
		}
		iss.Outputs[k] = v
		switch k {
		case "pr_number":
			if n, err := strconv.Atoi(v); err == nil {
				iss.PRNumber = n
			}
		case "pr_url":
			iss.PRURL = v
		case "head_sha":
			iss.HeadSHA = v
		}
	}
}

// saveOutputs stores outputs of hooks that ran after the move was
// committed.
func (t *transition) saveOutputs(iss *Issue, outputs map[string]string) *Issue {
	if len(outputs) == 0 {
		return iss
	}
	return t.save(iss, outputs, nil)
}

// save writes outputs and change in one update of iss.
func (t *transition) save(iss *Issue, outputs map[string]string, change func(*Issue)) *Issue {
	updated, err := t.tx.Update(iss.Version, func(i *Issue) error {
		applyOutputs(i, outputs)
		if change != nil {
			change(i)
		}
		return nil
	})
	if err != nil {
		t.res.Warnings = append(t.res.Warnings, "could not save hook outputs: "+err.Error())
		return iss
	}
	t.res.Version = updated.Version
	return updated
}

// complete runs node's post_completion hooks after a move to to (rollbacks
// were decided before the commit).
func (t *transition) complete(iss *Issue, node, to *stages.Node) (*Issue, *stages.Node) {
	snap := t.snapshot(iss)
	outputs := map[string]string{}
	for _, h := range node.Completed(to) {
		if h.Name == "rollback" {
			continue
		}
		o := t.collect(h, snap, node, outputs)
		switch o.Kind {
		case hooks.KindRollback, hooks.KindStepBack, hooks.KindRedirect:
			iss = t.saveOutputs(iss, outputs)
			if next, cur := t.jump(iss, to, o); next != nil {
				return cur, next
			}
			return iss, to
		case hooks.KindFail, hooks.KindEscalate, hooks.KindPending:
			t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("%s (post_completion of %s): %s", h.Label(), node.Path, o.Reason))
		}
	}
	return t.saveOutputs(iss, outputs), to
}

// jump moves iss from where it is to the target of outcome o.
func (t *transition) jump(iss *Issue, from *stages.Node, o hooks.Outcome) (*stages.Node, *Issue) {
	target, ok := t.e.Config.Node(o.Target)
	kind := jumpKind(o.Kind)
	if !ok {
		t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("a hook sent the issue to unknown stage %q; it stays at %s", o.Target, from.Path))
		return nil, iss
	}
	if err := t.m.Check(t.ctx, from.Path, target.Path, kind); err != nil {
		t.res.Warnings = append(t.res.Warnings, err.Error())
		return nil, iss
	}
	cur, err := t.commit(iss, target.Path, kind, jumpReason(o), o.Outputs)
	if err != nil {
		t.res.Warnings = append(t.res.Warnings, err.Error())
		return nil, iss
	}
	t.res.To, t.res.Kind, t.res.Version = target.Path, kind, cur.Version
	t.res.Reasons = append(t.res.Reasons, jumpReason(o))
	return target, cur
}

// enter runs to's post_start hooks, unless the controller owns to, and
// loads the stage's instructions. It returns the entry hooks that failed;
// they run again on the next `next` at this stage.
func (t *transition) enter(iss *Issue, from, to *stages.Node, depth int) (failures []string) {
	if to.Controller() {
		t.res.Instructions = fmt.Sprintf("%s is run by the host controller; `agenttree controller` takes the issue from here.", to.Path)
		return nil
	}
	snap := t.snapshot(iss)
	outputs := map[string]string{}
	for _, h := range to.Entering(from) {
		o := t.collect(h, snap, to, outputs)
		switch o.Kind {
		case hooks.KindRollback, hooks.KindStepBack, hooks.KindRedirect:
			iss = t.saveOutputs(iss, outputs)
			if depth >= t.e.maxChain {
				t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("stopped following redirects at %s after %d hops; check the hooks for a loop", to.Path, depth))
				return nil
			}
			if next, cur := t.jump(iss, to, o); next != nil {
				return t.enter(cur, to, next, depth+1)
			}
			failures = append(failures, fmt.Sprintf("%s (post_start of %s) asked to move the issue to %s, which the pipeline does not allow", h.Label(), to.Path, o.Target))
		case hooks.KindFail, hooks.KindEscalate, hooks.KindPending:
			failures = append(failures, fmt.Sprintf("%s (post_start of %s): %s", h.Label(), to.Path, o.Reason))
		}
	}
	t.finishEntry(iss, outputs, failures)
	t.res.Unfinished = append(t.res.Unfinished, failures...)
	t.res.Instructions = t.e.instructions(to, iss)
	return failures
}

// finishEntry saves the entry hooks' outputs and what is still pending, in
// one write.
func (t *transition) finishEntry(iss *Issue, outputs map[string]string, failures []string) {
	var pending *EntryPending
	if iss.EntryPending != nil && len(failures) > 0 {
		p := *iss.EntryPending
		p.Failures = failures
		pending = &p
	}
	if len(outputs) == 0 && equalPending(pending, iss.EntryPending) {
		return
	}
	t.save(iss, outputs, func(i *Issue) { i.EntryPending = pending })
}

func equalPending(a, b *EntryPending) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Stage == b.Stage && a.From == b.From && slices.Equal(a.Failures, b.Failures)
}

// resumeEntry reruns the entry hooks of node if they did not finish when
// the issue arrived. It returns what still fails.
func (t *transition) resumeEntry(iss *Issue, node *stages.Node) (failures []string, ran bool) {
	if iss.EntryPending == nil || iss.EntryPending.Stage != node.Path {
		return nil, false
	}
	if t.dryRun() {
		return []string{fmt.Sprintf("the entry hooks of %s did not finish; `agenttree next` runs them again", node.Path)}, false
	}
	from, _ := t.e.Config.Node(iss.EntryPending.From)
	probe := &transition{e: t.e, ctx: t.ctx, tx: t.tx, actor: t.actor, res: &Result{}, flow: t.flow, m: t.m}
	failures = probe.enter(iss, from, node, 0)
	t.res.Warnings = append(t.res.Warnings, probe.res.Warnings...)
	t.res.Notes = append(t.res.Notes, probe.res.Notes...)
	return failures, true
}
