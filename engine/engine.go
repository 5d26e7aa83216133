package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Status is how a command left an issue.
type Status string

const (
	StatusAdvanced Status = "advanced"
	StatusBlocked  Status = "blocked"
	StatusWaiting  Status = "waiting"
	StatusFinal    Status = "final"
)

// ExitCode is the process exit status for a result: 0 moved or final,
// 1 blocked by a gate, 3 waiting on a human or the controller.
func (s Status) ExitCode() int {
	switch s {
	case StatusBlocked:
		return 1
	case StatusWaiting:
		return 3
	}
	return 0
}

// Result reports one transition attempt.
type Result struct {
	Issue    int      `json:"issue"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Status   Status   `json:"status"`
	Kind     string   `json:"kind,omitempty"`
	Reasons  []string `json:"reasons"`
	Warnings []string `json:"warnings,omitempty"`
	// Notes are what hooks had to say (a PR opened, a branch rebased),
	// for the agent's eyes.
	Notes        []string `json:"notes,omitempty"`
	Skipped      []string `json:"skipped,omitempty"`
	DryRun       bool     `json:"dry_run,omitempty"`
	Version      int      `json:"version"`
	Instructions string   `json:"instructions,omitempty"`
}

// ErrNotReview is returned when approve is used outside a human review.
var ErrNotReview = errors.New("not at a human review stage")

// Engine moves issues through the pipeline of one config.
type Engine struct {
	Config *stages.Config
	Store  *Store
	Hooks  *hooks.Registry
	Log    *slog.Logger
	// WorkDir is the git work tree hooks run in (the repository root).
	WorkDir string
	// Forge is where PRs live; nil when the config's hooks need none.
	Forge forge.Forge
	// Git opens git in a work tree, for the PR hooks.
	Git func(dir string) hooks.Git
	// maxChain bounds redirects triggered by entry and completion hooks,
	// so a misconfigured loop cannot spin forever.
	maxChain int
}

// New returns an engine over cfg and store.
func New(cfg *stages.Config, store *Store, reg *hooks.Registry, log *slog.Logger) *Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{Config: cfg, Store: store, Hooks: reg, Log: log, WorkDir: filepath.Dir(cfg.File), maxChain: 8}
}

// hookEnv is what hooks see of the world.
func (e *Engine) hookEnv() *hooks.Env {
	return &hooks.Env{Forge: e.Forge, Git: e.Git, Config: e.Config, Remote: "origin", Log: e.Log}
}

// Machine returns the stage machine of a flow.
func (e *Engine) Machine(flow *stages.Flow) *Machine {
	return NewMachine(e.Config, flow, e.Hooks)
}

func (e *Engine) locate(iss *Issue) (*stages.Flow, *stages.Node, error) {
	flow, err := e.Config.Flow(iss.Flow)
	if err != nil {
		return nil, nil, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	node, ok := e.Config.Node(iss.Stage)
	if !ok || node.Path != iss.Stage {
		return nil, nil, fmt.Errorf("issue %d is at stage %q, which %s does not declare; put the stage back or move the issue", iss.ID, iss.Stage, e.Config.File)
	}
	if flow.Index(node.Path) < 0 {
		return nil, nil, fmt.Errorf("issue %d is at stage %q, which is not part of its flow %q", iss.ID, iss.Stage, flow.Name)
	}
	return flow, node, nil
}

// Snapshot is the read-only view of iss that hooks get.
func (e *Engine) Snapshot(iss *Issue) *hooks.Issue {
	h := &hooks.Issue{
		ID: iss.ID, Slug: iss.Slug, Title: iss.Title, Flow: iss.Flow, Stage: iss.Stage,
		Branch: iss.Branch, PRNumber: iss.PRNumber, PRURL: iss.PRURL, HeadSHA: iss.HeadSHA,
		Labels: iss.Labels, Vars: iss.Vars, Outputs: iss.Outputs,
		Dir: e.Store.Dir(iss.ID), WorkDir: e.WorkDir, DefaultBranch: e.Config.DefaultBranch,
	}
	for _, x := range iss.History {
		h.History = append(h.History, hooks.Event{From: x.From, To: x.To, Kind: x.Kind, Actor: x.Actor, Reason: x.Reason, At: x.At})
	}
	if w, err := e.Store.Watch(iss.ID); err == nil {
		h.Watch = w
	} else {
		e.Log.Warn("unreadable watch state; starting afresh", "issue", iss.ID, "err", err)
	}
	return h
}

// Next moves issue id to the next stage of its flow if the gates pass.
func (e *Engine) Next(ctx context.Context, id int, actor Actor, dryRun bool) (*Result, error) {
	return e.forward(ctx, id, actor, dryRun, false)
}

// Approve moves issue id out of a human review. Only a person may approve.
func (e *Engine) Approve(ctx context.Context, id int, actor Actor, dryRun bool) (*Result, error) {
	return e.forward(ctx, id, actor, dryRun, true)
}

func (e *Engine) forward(ctx context.Context, id int, actor Actor, dryRun, approve bool) (*Result, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	flow, node, err := e.locate(iss)
	if err != nil {
		return nil, err
	}
	res := &Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Reasons: []string{}, DryRun: dryRun}
	if approve {
		if actor.Kind != ActorHuman {
			res.Status = StatusWaiting
			res.Reasons = append(res.Reasons, fmt.Sprintf("only a person can approve; %s cannot (ask a person to run `agenttree approve %d`)", actor, id))
			return res, nil
		}
		if !node.HumanReview() {
			return nil, fmt.Errorf("issue %d is at %s: %w; use `agenttree next -i %d`", id, node.Path, ErrNotReview, id)
		}
	}
	if t := node.Terminal(); t != "" {
		res.Status = StatusFinal
		res.Reasons = append(res.Reasons, fmt.Sprintf("issue %d is done: %s is a terminal (%s) stage", id, node.Path, t))
		return res, nil
	}
	if why := waitReason(actor, node, id); why != "" {
		res.Status = StatusWaiting
		res.Reasons = append(res.Reasons, why)
		return res, nil
	}
	if failures, ran := e.resumeEntry(ctx, iss, flow, node, actor, res); len(failures) > 0 {
		res.Status = StatusBlocked
		res.Reasons = append(res.Reasons, failures...)
		return res, nil
	} else if ran {
		if iss, err = e.Store.Get(id); err != nil { // entry hooks may have saved outputs
			return nil, err
		}
		res.Version = iss.Version
	}
	to, skipped, err := flow.Next(node.Path, e.Snapshot(iss).CondVars())
	if err != nil {
		return nil, err
	}
	res.Skipped = skipped
	if to == nil {
		res.Status = StatusFinal
		res.Reasons = append(res.Reasons, fmt.Sprintf("issue %d is at %s, the last stage of flow %q", id, node.Path, flow.Name))
		return res, nil
	}
	kind := KindAdvance
	if node.HumanReview() {
		kind = KindApprove
		e.approvePR(ctx, iss, res)
	}
	e.advance(ctx, iss, flow, node, to, kind, actor, res)
	return res, nil
}

// approvePR records a person's approval on the PR where the forge takes it
// from agenttree, so the review gate (pr_approved) sees it.
func (e *Engine) approvePR(ctx context.Context, iss *Issue, res *Result) {
	ap, ok := e.Forge.(forge.Approver)
	if !ok || iss.PRNumber == 0 || res.DryRun {
		return
	}
	if err := ap.Approve(ctx, iss.PRNumber, ActorHuman); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("could not record the approval on PR #%d: %v", iss.PRNumber, err))
	}
}

// gateResult is what the gate of a transition found.
type gateResult struct {
	reasons  []string
	warnings []string
	notes    []string
	outputs  map[string]string
	// jump is set when a hook sent the issue elsewhere instead.
	jump *hooks.Outcome
}

// gate checks what guards leaving node for to: output files, then the
// pre_completion hooks in order. Every failure is collected; a hook that
// redirects stops the gate.
func (e *Engine) gate(ctx context.Context, snap *hooks.Issue, node, to *stages.Node, dryRun bool) gateResult {
	var g gateResult
	g.outputs = map[string]string{}
	outputs, entries := node.Leaving(to)
	for _, f := range outputs {
		if _, err := os.Stat(filepath.Join(snap.Dir, f)); err != nil {
			g.reasons = append(g.reasons, fmt.Sprintf("%s: output file %s is missing; write it in %s", node.Path, f, snap.Dir))
		}
	}
	for _, h := range entries {
		o := e.runHook(ctx, h, snap, node, !dryRun)
		g.warnings = append(g.warnings, o.Warnings...)
		if o.Message != "" && o.Kind == hooks.KindPass {
			g.notes = append(g.notes, o.Message)
		}
		for k, v := range o.Outputs {
			g.outputs[k] = v
			snap.Outputs = withOutput(snap.Outputs, k, v)
		}
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

// runHook runs one hook and applies its on_failure policy. With apply set,
// the hook's watch state and stage documents are written.
func (e *Engine) runHook(ctx context.Context, h *stages.HookEntry, snap *hooks.Issue, node *stages.Node, apply bool) hooks.Outcome {
	start := time.Now()
	o := e.Hooks.Run(ctx, h, snap, e.hookEnv())
	e.Log.Debug("hook", "issue", snap.ID, "hook", h.Name, "outcome", o.Kind, "took", time.Since(start))
	if apply {
		e.record(ctx, snap, &o)
	}
	if o.Kind == hooks.KindStepBack && o.Target == "" {
		return e.stepBack(node, o, snap)
	}
	if o.Kind != hooks.KindFail || h.OnFailure == nil {
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
		return e.stepBack(node, o, snap)
	}
	return o
}

// stepBack sends a failure to the stage's on_failure target, with the
// stage's message filled in. Without a target it stays a failure.
func (e *Engine) stepBack(node *stages.Node, o hooks.Outcome, snap *hooks.Issue) hooks.Outcome {
	of := node.OnFailure()
	if of == nil || of.StepBackTo == "" {
		o.Kind = hooks.KindFail
		o.Reason += fmt.Sprintf(" (no step back: %s has no on_failure.step_back_to)", node.Path)
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
func (e *Engine) record(ctx context.Context, snap *hooks.Issue, o *hooks.Outcome) {
	for name, content := range o.Files {
		if err := e.Store.WriteDoc(snap.ID, name, []byte(content)); err != nil {
			o.Warnings = append(o.Warnings, "could not write "+name+": "+err.Error())
		}
	}
	if len(o.Watch) == 0 {
		return
	}
	if err := e.Store.UpdateWatch(ctx, snap.ID, o.Watch); err != nil {
		o.Warnings = append(o.Warnings, "could not save watch state: "+err.Error())
		return
	}
	w := make(map[string]string, len(snap.Watch)+len(o.Watch))
	for k, v := range snap.Watch {
		w[k] = v
	}
	for k, v := range o.Watch {
		if v == "" {
			delete(w, k)
		} else {
			w[k] = v
		}
	}
	snap.Watch = w
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
func (e *Engine) advance(ctx context.Context, iss *Issue, flow *stages.Flow, node, to *stages.Node, kind string, actor Actor, res *Result) {
	m := e.Machine(flow)
	res.To = to.Path
	if err := m.Check(ctx, node.Path, to.Path, kind); err != nil {
		res.Status = StatusBlocked
		res.Reasons = append(res.Reasons, err.Error())
		return
	}
	snap := e.Snapshot(iss)
	g := e.gate(ctx, snap, node, to, res.DryRun)
	res.Warnings = append(res.Warnings, g.warnings...)
	res.Notes = append(res.Notes, g.notes...)
	reason := "gates passed"
	if g.jump != nil {
		target, ok := e.Config.Node(g.jump.Target)
		if !ok {
			res.Status = StatusBlocked
			res.Reasons = append(res.Reasons, fmt.Sprintf("a hook sent the issue to unknown stage %q", g.jump.Target))
			return
		}
		to, kind, reason = target, jumpKind(g.jump.Kind), jumpReason(*g.jump)
		if err := m.Check(ctx, node.Path, to.Path, kind); err != nil {
			res.Status = StatusBlocked
			res.Reasons = append(res.Reasons, err.Error())
			return
		}
	} else if len(g.reasons) > 0 {
		res.Status = StatusBlocked
		res.Reasons = append(res.Reasons, g.reasons...)
		return
	} else if back, why, blocked := e.decideRollback(ctx, snap, node, to, actor, res); blocked {
		res.Status = StatusBlocked
		res.Reasons = append(res.Reasons, why)
		return
	} else if back != nil {
		if err := m.Check(ctx, node.Path, back.Path, KindRollback); err != nil {
			res.Status = StatusBlocked
			res.Reasons = append(res.Reasons, err.Error())
			return
		}
		to, kind, reason = back, KindRollback, why
		res.Reasons = append(res.Reasons, why)
	}
	res.To, res.Kind = to.Path, kind
	if g.jump != nil {
		res.Reasons = append(res.Reasons, reason)
	}
	if res.DryRun {
		res.Status = StatusAdvanced
		return
	}
	cur, err := e.commit(ctx, iss, to.Path, kind, actor, reason, g.outputs)
	if err != nil {
		res.Status = StatusBlocked
		res.Reasons = append(res.Reasons, err.Error())
		return
	}
	res.Status, res.Version = StatusAdvanced, cur.Version
	if kind == KindAdvance || kind == KindApprove {
		cur, to = e.complete(ctx, cur, m, node, to, actor, res)
	}
	res.Warnings = append(res.Warnings, e.enter(ctx, cur, m, node, to, actor, res, 0)...)
}

// decideRollback runs the rollback hooks of node's post_completion before
// the move is committed, so a review loop sends the issue back instead of
// forward in one step. A spent rollback budget blocks an agent; a person's
// `next` is the decision to move on, and goes through with a warning.
func (e *Engine) decideRollback(ctx context.Context, snap *hooks.Issue, node, to *stages.Node, actor Actor, res *Result) (back *stages.Node, why string, blocked bool) {
	for _, h := range node.Completed(to) {
		if h.Name != "rollback" {
			continue
		}
		o := e.runHook(ctx, h, snap, node, !res.DryRun)
		res.Warnings = append(res.Warnings, o.Warnings...)
		switch o.Kind {
		case hooks.KindRollback:
			target, ok := e.Config.Node(o.Target)
			if !ok {
				return nil, fmt.Sprintf("rollback names unknown stage %q", o.Target), true
			}
			return target, o.Reason, false
		case hooks.KindFail:
			if actor.Kind == ActorHuman {
				res.Warnings = append(res.Warnings, o.Reason+" (moving on: a person decided)")
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

// commit writes the move under the issue lock, if nobody moved it first.
func (e *Engine) commit(ctx context.Context, iss *Issue, to, kind string, actor Actor, reason string, outputs map[string]string) (*Issue, error) {
	return e.Store.Update(ctx, iss.ID, iss.Version, func(cur *Issue) error {
		from := cur.Stage
		cur.Stage = to
		applyOutputs(cur, outputs)
		cur.History = append(cur.History, HistoryEntry{From: from, To: to, Kind: kind, Actor: actor.Kind, Reason: reason, At: time.Now().UTC().Truncate(time.Second)})
		return nil
	})
}

// applyOutputs keeps hook outputs on the issue; the PR facts also fill the
// issue's own fields.
func applyOutputs(iss *Issue, outputs map[string]string) {
	for k, v := range outputs {
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

// saveOutputs stores outputs of entry hooks, which run after the move was
// committed. Losing the race to another writer only costs the outputs.
func (e *Engine) saveOutputs(ctx context.Context, iss *Issue, outputs map[string]string, res *Result) {
	if len(outputs) == 0 {
		return
	}
	cur, err := e.Store.Get(iss.ID)
	if err != nil {
		res.Warnings = append(res.Warnings, "could not save hook outputs: "+err.Error())
		return
	}
	updated, err := e.Store.Update(ctx, iss.ID, cur.Version, func(i *Issue) error {
		applyOutputs(i, outputs)
		return nil
	})
	if err != nil {
		res.Warnings = append(res.Warnings, "could not save hook outputs: "+err.Error())
		return
	}
	res.Version = updated.Version
}

// complete runs node's post_completion hooks after a move to to. A hook
// that rolls back wins over the advance: the issue goes to its target.
func (e *Engine) complete(ctx context.Context, iss *Issue, m *Machine, node, to *stages.Node, actor Actor, res *Result) (*Issue, *stages.Node) {
	snap := e.Snapshot(iss)
	for _, h := range node.Completed(to) {
		if h.Name == "rollback" {
			continue // decided before the commit (decideRollback)
		}
		o := e.runHook(ctx, h, snap, node, true)
		res.Warnings = append(res.Warnings, o.Warnings...)
		if o.Message != "" && o.Kind == hooks.KindPass {
			res.Notes = append(res.Notes, o.Message)
		}
		switch o.Kind {
		case hooks.KindRollback, hooks.KindStepBack, hooks.KindRedirect:
			if next, cur := e.jump(ctx, iss, m, to, o, actor, res); next != nil {
				return cur, next
			}
			return iss, to
		case hooks.KindFail, hooks.KindEscalate, hooks.KindPending:
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s (post_completion of %s): %s", h.Label(), node.Path, o.Reason))
		}
	}
	return iss, to
}

// jump moves iss from where it is to the target of outcome o.
func (e *Engine) jump(ctx context.Context, iss *Issue, m *Machine, from *stages.Node, o hooks.Outcome, actor Actor, res *Result) (*stages.Node, *Issue) {
	target, ok := e.Config.Node(o.Target)
	kind := jumpKind(o.Kind)
	if !ok {
		res.Warnings = append(res.Warnings, fmt.Sprintf("a hook sent the issue to unknown stage %q; it stays at %s", o.Target, from.Path))
		return nil, iss
	}
	if err := m.Check(ctx, from.Path, target.Path, kind); err != nil {
		res.Warnings = append(res.Warnings, err.Error())
		return nil, iss
	}
	cur, err := e.commit(ctx, iss, target.Path, kind, actor, jumpReason(o), o.Outputs)
	if err != nil {
		res.Warnings = append(res.Warnings, err.Error())
		return nil, iss
	}
	res.To, res.Kind, res.Version = target.Path, kind, cur.Version
	res.Reasons = append(res.Reasons, jumpReason(o))
	return target, cur
}

// enter runs to's post_start hooks, unless the controller owns to, and
// loads the stage's instructions.
func (e *Engine) enter(ctx context.Context, iss *Issue, m *Machine, from, to *stages.Node, actor Actor, res *Result, depth int) (failures []string) {
	if to.Controller() {
		res.Instructions = fmt.Sprintf("%s is run by the host controller; `agenttree controller` takes the issue from here.", to.Path)
		return nil
	}
	snap := e.Snapshot(iss)
	outputs := map[string]string{}
	defer func() { e.saveOutputs(ctx, iss, outputs, res) }()
	for _, h := range to.Entering(from) {
		o := e.runHook(ctx, h, snap, to, true)
		res.Warnings = append(res.Warnings, o.Warnings...)
		if o.Message != "" && o.Kind == hooks.KindPass {
			res.Notes = append(res.Notes, o.Message)
		}
		for k, v := range o.Outputs {
			outputs[k] = v
			snap.Outputs = withOutput(snap.Outputs, k, v)
		}
		switch o.Kind {
		case hooks.KindRollback, hooks.KindStepBack, hooks.KindRedirect:
			if depth >= e.maxChain {
				res.Warnings = append(res.Warnings, fmt.Sprintf("stopped following redirects at %s after %d hops; check the hooks for a loop", to.Path, depth))
				return nil
			}
			if next, cur := e.jump(ctx, iss, m, to, o, actor, res); next != nil {
				return e.enter(ctx, cur, m, to, next, actor, res, depth+1)
			}
		case hooks.KindFail, hooks.KindEscalate, hooks.KindPending:
			failures = append(failures, fmt.Sprintf("%s (post_start of %s): %s", h.Label(), to.Path, o.Reason))
		}
	}
	// An entry hook that did not finish (a push that failed, say) runs
	// again on the next `next` at this stage, before the gate.
	pending := map[string]string{watchEntryStage: "", watchEntryFrom: ""}
	if len(failures) > 0 {
		pending[watchEntryStage] = to.Path
		if from != nil {
			pending[watchEntryFrom] = from.Path
		}
	}
	if len(failures) > 0 || snap.Watch[watchEntryStage] != "" {
		if err := e.Store.UpdateWatch(ctx, iss.ID, pending); err != nil {
			res.Warnings = append(res.Warnings, "could not save the entry state: "+err.Error())
		}
	}
	res.Instructions = e.instructions(to)
	return failures
}

// Watch keys for entry hooks that have to run again.
const (
	watchEntryStage = "entry.incomplete"
	watchEntryFrom  = "entry.from"
)

// resumeEntry reruns the entry hooks of node if they did not finish when
// the issue arrived. It returns what still fails.
func (e *Engine) resumeEntry(ctx context.Context, iss *Issue, flow *stages.Flow, node *stages.Node, actor Actor, res *Result) (failures []string, ran bool) {
	w, err := e.Store.Watch(iss.ID)
	if err != nil || w[watchEntryStage] != node.Path {
		return nil, false
	}
	if res.DryRun {
		return []string{fmt.Sprintf("the entry hooks of %s did not finish; `agenttree next` runs them again", node.Path)}, false
	}
	from, _ := e.Config.Node(w[watchEntryFrom])
	probe := &Result{}
	failures = e.enter(ctx, iss, e.Machine(flow), from, node, actor, probe, 0)
	res.Warnings = append(res.Warnings, probe.Warnings...)
	res.Notes = append(res.Notes, probe.Notes...)
	return failures, true
}

// instructions returns the stage's skill file, or a one-line summary.
func (e *Engine) instructions(n *stages.Node) string {
	if skill := n.Skill(); skill != "" {
		p := skill
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(e.Config.File), p)
		}
		if data, err := os.ReadFile(p); err == nil {
			return strings.TrimRight(string(data), "\n")
		}
	}
	switch {
	case n.HumanReview():
		return fmt.Sprintf("%s waits for a person: review, then `agenttree approve`.", n.Path)
	case n.Terminal() != "":
		return fmt.Sprintf("%s is the end of the flow.", n.Path)
	}
	return fmt.Sprintf("Work on %s, then run `agenttree next`.", n.Path)
}
