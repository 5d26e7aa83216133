package engine

import (
	"cmp"
	"context"
	"fmt"
	"github.com/agenttree/agenttree/engine/act"
	"strings"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// outWatched remembers, on the issue, the head and kind of failure a
// background watch last acted on, so one failure is acted on once.
const outWatched = "watch_acted_on"

// Watcher is the entry of a hook that asks for the issue's PR to be
// watched in the background while an agent or a person works at node
// (poll_pr_status), or nil.
func (e *Engine) Watcher(node *stages.Node) *stages.HookEntry { return prhead.Watcher(e.Hooks, node) }

// WatchPR is the controller's background look at the PR of issue id, at a
// stage whose watcher asks for one: it polls CI once (the hook whose spec
// says it waits for CI), and a failure or a conflict on the PR's head goes
// to the watcher's on_ci_failure / on_conflict, else to the stage's
// on_failure, as for the controller's own stages — once per head and
// failure. It returns nil when there is nothing to watch.
func (e *Engine) WatchPR(ctx context.Context, id int) (*Result, error) {
	return act.Finish(e.watchPR(ctx, id))
}

func (e *Engine) watchPR(ctx context.Context, id int) (*Result, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	flow, node, err := e.locate(iss)
	if err != nil {
		return nil, err
	}
	w := e.Watcher(node)
	if w == nil || iss.PRNumber == 0 || iss.Escalated != nil {
		return nil, nil
	}
	probe, err := prhead.Probe(e.Hooks, w)
	if err != nil {
		return nil, err
	}
	t := &transition{e: e, ctx: ctx, tx: tx, actor: Actor{Kind: ActorController}, run: e.Machine(flow).Start(node.Path)}
	base := Result{Issue: id, From: iss.Stage, To: iss.Stage, Version: iss.Version, Reasons: []string{}, Status: StatusWaiting}
	seq := t.sequence(node, iss, policy.RouteAll)
	o := seq.run(probe)
	if o.Kind == hooks.KindPending || o.Kind == hooks.KindPass {
		base.Reasons, base.Class, base.Outcome.RetryAfter = []string{cmp.Or(o.Reason, "CI passed")}, o.Class, o.RetryAfter
		return &base, nil
	}
	return t.actOnWatch(iss, node, seq, o, base)
}

// actOnWatch acts on what a background watch found (o, routed by the
// watcher's policies), once per head and kind of failure: the mark that
// says so is written with the move it made, or after the messages it
// queued (keyed by the same mark, so a crash in between sends nothing
// twice).
func (t *transition) actOnWatch(iss *issues.Issue, node *stages.Node, seq *sequence, o hooks.Outcome, base Result) (*Result, error) {
	acted := fmt.Sprintf("%s %s", cmp.Or(o.Outputs["head_sha"], seq.snap.HeadSHA), o.Class)
	if iss.Outputs[outWatched] == acted {
		base.Reasons = []string{"already acted on: " + o.Reason}
		return &base, nil
	}
	mark := map[string]string{outWatched: acted}
	f := findings{issue: iss, scope: strings.ReplaceAll(acted, " ", "-")}
	if jumps(o) {
		if h := t.onward(node, node, o, seq); h != nil {
			h.outputs, mark = policy.MergeOutputs(h.outputs, mark), nil
			j := t.drive(iss, node, *h, false)
			j.gate.said.add(seq.said)
			f.journey = &j
		}
	}
	if f.journey == nil {
		f.wait, f.said = o.Reason, seq.said
	}
	res := f.result(base, false)
	if err := t.settle(f, &res, len(iss.History)); err != nil {
		return nil, err
	}
	if mark != nil {
		cur, err := t.tx.Get()
		if err != nil {
			return nil, err
		}
		_, warn := t.save(cur, mark, nil)
		res.Warnings = append(res.Warnings, warn...)
	}
	return &res, nil
}
