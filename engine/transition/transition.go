// Package transition makes the moves of one command on one locked issue
// (docs/ARCHITECTURE.md §4): the gate decides in plain code, the stage
// machine checks the edge and records the move once it is written, the
// stage's hooks run on arrival, and where they send the issue is
// followed; what every step found makes the command's act.Result once.
// The engine decides who may act and takes the issue's lock; a
// Transition does the rest.
package transition

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Deps are what transitions work with: the engine's config, store, hooks
// and forge, shared by every transition it makes.
type Deps struct {
	Config *stages.Config
	Store  *issues.Store
	Hooks  *hooks.Registry
	Log    *slog.Logger
	// Forge is the engine's forge as it is when asked (nil when the
	// config's hooks need none): the controller wraps the engine's forge
	// in its per-tick batch after New, and the transitions must see that
	// batch as the hooks do.
	Forge func() forge.Forge
	// MaxChain bounds the moves that entry and completion hooks make in
	// one command, so a misconfigured loop cannot spin forever.
	MaxChain int
	Notices  *notice.Book
	// Env is what hooks see of the world; Snapshot the hooks' view of an
	// issue (without its watch state); Outbox an issue's queue of messages.
	Env      func(dryRun bool) *hooks.Env
	Snapshot func(*issues.Issue) *hooks.Issue
	Outbox   func(id int) *outbox.Box
}

// Transition is one command's work on one issue, made while holding its
// lock: every write goes through tx, so no other agenttree process
// interleaves. Its steps return values; the command's Result is built from
// them once.
type Transition struct {
	d      *Deps
	ctx    context.Context
	tx     *issues.Tx
	actor  act.Actor
	dryRun bool
	// run is the stage machine standing where the issue is: it says which
	// moves are legal from there, and records those written.
	run *machine.Run
	// approving: a dry run of a person's approval on a forge where the
	// approval is agenttree's to record; the gate counts it as made.
	approving bool
}

// New is a transition of the issue whose lock tx holds, by actor; run is
// the stage machine standing where the issue is (nil for a command that
// makes no move).
func New(ctx context.Context, d *Deps, tx *issues.Tx, actor act.Actor, dryRun bool, run *machine.Run) *Transition {
	return &Transition{d: d, ctx: ctx, tx: tx, actor: actor, dryRun: dryRun, run: run}
}

// Forward is next or approve (approve) of iss at node, in flow: it
// decides the move, makes it and what follows, and returns the command's
// Result, base being the issue as the command found it.
func (t *Transition) Forward(iss *issues.Issue, flow *stages.Flow, node *stages.Node, approve bool, base act.Result) (*act.Result, error) {
	f, err := t.move(iss, flow, node, approve)
	if err != nil {
		return nil, err
	}
	res := f.result(base, t.dryRun)
	if res.Status == act.StatusBlocked && res.Instructions == "" && notice.SteppedBackTo(iss, node) {
		// Back here for a failure, and not through yet: what to do about
		// that kind of failure is worth saying again.
		res.Instructions = t.d.Notices.Instructions(node, iss)
	}
	if res.Conflict && len(res.Reasons) > 0 {
		if cur, err := t.tx.Get(); err == nil {
			res.Reasons[len(res.Reasons)-1] += notice.LastChange(cur)
		}
	}
	if !t.dryRun {
		if err := t.settle(f, &res, len(iss.History)); err != nil {
			return nil, err
		}
	}
	return &res, nil
}

// Order carries out o at p: to is where it puts the issue (nil: it stays,
// as a resume does), skipped the stages it passes over.
func (t *Transition) Order(p act.Place, o act.Order, to *stages.Node, skipped []string, base act.Result) (*act.Result, error) {
	if to == nil {
		return t.stay(p, o, base)
	}
	return t.override(p, o, hop{from: p.Node, to: to, kind: o.Kind, reason: o.Reason}, skipped, base)
}

// SendBack moves iss back through CI as rc says, as the controller's look
// at a review whose PR has a new head.
func (t *Transition) SendBack(iss *issues.Issue, rc *prhead.Recheck, base act.Result) (*act.Result, error) {
	f, err := t.sendBack(iss, rc)
	if err != nil {
		return nil, err
	}
	res := f.result(base, false)
	if err := t.settle(f, &res, len(iss.History)); err != nil {
		return nil, err
	}
	return &res, nil
}

// Watch polls CI once through probe, for the background watch of iss's
// PR at node, and acts on a failure it finds once per head.
func (t *Transition) Watch(iss *issues.Issue, node *stages.Node, probe *stages.HookEntry, base act.Result) (*act.Result, error) {
	seq := t.sequence(node, iss, policy.RouteAll)
	o := seq.run(probe)
	if o.Kind == hooks.KindPending || o.Kind == hooks.KindPass {
		base.Reasons, base.Class, base.Outcome.RetryAfter = []string{cmp.Or(o.Reason, "CI passed")}, o.Class, o.RetryAfter
		return &base, nil
	}
	return t.actOnWatch(iss, node, seq, o, base)
}

// Poll runs entry, the hook that waits for CI, once on iss at node, and
// keeps what it learned when it came to a verdict.
func (t *Transition) Poll(iss *issues.Issue, entry *stages.HookEntry, node *stages.Node) (hooks.Outcome, *issues.Issue) {
	o, _ := t.runHook(entry, t.snapshot(iss), node, policy.RouteNone)
	if o.Kind == hooks.KindPass || o.Kind == hooks.KindFail {
		var warn []string
		iss, warn = t.save(iss, o.Outputs, nil)
		o.Warnings = append(o.Warnings, warn...)
	}
	return o, iss
}

// Escalate stops iss for a person, for the controller's reason.
func (t *Transition) Escalate(iss *issues.Issue, e issues.Escalation) (*issues.Issue, error) {
	return t.escalate(iss, escalation{Escalation: e})
}
