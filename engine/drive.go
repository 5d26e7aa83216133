package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/looplab/fsm"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/stages"
)

// journey is what one command did on the stage machine: the gate's
// decision on the move asked for, then every move written and what followed
// each, in order. The steps return these values; drive keeps them; the
// command's Result is built from them once.
type journey struct {
	// want is the move asked for; gate, what its gate decided (nothing,
	// when the move was not gated).
	want       hop
	firstGated bool
	gate       decision
	hops       []hop
	arrivals   []arrival
	// issue is the issue as last written.
	issue *issues.Issue
	// err is a move that could not be written (another process moved the
	// issue first, a disk error).
	err  error
	said said
	// stepBack describes the last step back written.
	stepBack *StepBack
}

// Reasons the first event is cancelled by its gate.
var (
	errHeld      = errors.New("the gate holds the issue")
	errElsewhere = errors.New("the gate sends the issue elsewhere")
	errDryRun    = errors.New("dry run: nothing is written")
)

// drive asks the stage machine, standing at from, for the move want, and
// follows where the hooks send the issue from there. The machine's
// callbacks run the steps (see driver); the journey keeps what each
// returned. The machine refuses any event the YAML does not declare.
func (t *transition) drive(iss *issues.Issue, from *stages.Node, want hop, gated bool) journey {
	d := &driver{t: t, from: from, gated: gated,
		j: journey{want: want, firstGated: gated, issue: iss, gate: decision{status: StatusAdvanced, hop: want}}}
	d.sm = t.m.FSM(from.Path, fsm.Callbacks{
		"before_event": d.beforeEvent,
		"leave_state":  d.leaveState,
		"enter_state":  d.enterState,
	})
	err := d.fire(t.ctx, want)
	if errors.Is(err, errElsewhere) && !t.dryRun {
		err = d.fire(t.ctx, d.j.gate.hop)
	}
	if err != nil && d.j.err == nil && !errors.Is(err, errHeld) && !errors.Is(err, errElsewhere) && !errors.Is(err, errDryRun) {
		d.j.err = err
	}
	return d.j
}

// driver runs one command's moves as the callbacks of a looplab FSM.
type driver struct {
	t    *transition
	sm   *fsm.FSM // this command's run of the stage machine
	from *stages.Node
	// gated: the next event is the move asked for, and its gate runs.
	gated bool
	j     journey
}

// fire asks the machine for the move h. looplab/fsm makes a move to the
// state it is in no transition at all, with no callbacks; but a step back
// to the issue's own stage is a move (written, and the stage entered
// again), so that one is made here, along the same declared edge.
func (d *driver) fire(ctx context.Context, h hop) error {
	name := machine.Event(h.kind, h.to.Path)
	if h.to.Path != d.sm.Current() {
		return d.sm.Event(ctx, name, h)
	}
	if !d.sm.Can(name) || d.gated {
		// `next` never asks for the stage the issue is at: only hooks do.
		return fsm.InvalidEventError{Event: name, State: d.sm.Current()}
	}
	if err := d.write(h); err != nil {
		return err
	}
	d.enter(ctx, h.to.Path)
	return nil
}

// beforeEvent runs the gate of the move asked for (only that one: the
// moves hooks ask for are not gated). A gate that fails cancels the event;
// one that sends the issue elsewhere (a redirect, a rollback) cancels it
// too, and drive asks for that move instead. Events must not be fired from
// here (looplab/fsm holds its lock).
func (d *driver) beforeEvent(_ context.Context, e *fsm.Event) {
	if !d.gated {
		return
	}
	d.gated = false
	want := d.j.want
	d.j.gate = d.t.decide(d.j.issue, d.from, want.to, want.kind)
	switch h := d.j.gate.hop; {
	case d.j.gate.status != StatusAdvanced:
		e.Cancel(errHeld)
	case h.to.Path != want.to.Path || h.kind != want.kind:
		e.Cancel(errElsewhere)
	case d.t.dryRun:
		e.Cancel(errDryRun)
	default:
		// The move as decided: with its reason, and the outputs of the
		// gate's hooks over those of the move asked for (a person's
		// approval), which its write keeps.
		h.outputs = merged(want.outputs, h.outputs)
		e.Args[0] = h
	}
}

// merged is over laid on under, in a map of its own.
func merged(under, over map[string]string) map[string]string {
	if len(under) == 0 {
		return over
	}
	out := make(map[string]string, len(under)+len(over))
	maps.Copy(out, under)
	maps.Copy(out, over)
	return out
}

// leaveState writes the move, atomically, with its history entry.
func (d *driver) leaveState(_ context.Context, e *fsm.Event) {
	if err := d.write(e.Args[0].(hop)); err != nil {
		e.Cancel(err)
	}
}

func (d *driver) write(h hop) error {
	cur, err := d.t.commit(d.j.issue, h)
	if err != nil {
		d.j.err = err
		return err
	}
	d.j.issue, d.j.hops = cur, append(d.j.hops, h)
	if h.kind == stages.MoveStepBack {
		d.j.stepBack = d.t.stepBackOf(cur, h)
	}
	return nil
}

// enterState runs the completion hooks of the stage left, then the entry
// hooks of the stage entered; a hook there that sends the issue on fires
// the next event (looplab/fsm allows it from enter callbacks), up to
// maxChain moves.
func (d *driver) enterState(ctx context.Context, e *fsm.Event) { d.enter(ctx, e.Dst) }

func (d *driver) enter(ctx context.Context, at string) {
	a := d.t.arrive(d.j.issue, d.j.hops[len(d.j.hops)-1])
	d.j.issue, d.j.arrivals = a.issue, append(d.j.arrivals, a)
	if a.next == nil {
		return
	}
	if len(d.j.hops) > d.t.e.maxChain {
		d.j.said.warn(fmt.Sprintf("stopped following redirects at %s after %d hops; check the hooks for a loop", at, len(d.j.hops)-1))
		return
	}
	if err := d.fire(ctx, *a.next); err != nil && d.j.err == nil {
		d.j.said.warn(fmt.Sprintf("could not move the issue on from %s: %v", at, err))
	}
}

// into fills in r what the command's moves did: where the issue went and
// why, what its hooks said, and what is left to do.
func (j journey) into(r *Result, dryRun bool) {
	j.gate.said.into(r)
	r.Reasons = append(r.Reasons, j.gate.reasons...)
	// Until a move is written, To names where the command was going.
	r.To = j.want.to.Path
	switch {
	case j.gate.status != StatusAdvanced:
		r.Status = j.gate.status
		if w := j.gate.wait; w != nil {
			r.RetryAfter, r.Class = w.RetryAfter, w.Class
		}
	case dryRun:
		r.Status, r.To, r.Kind = StatusAdvanced, j.gate.hop.to.Path, j.gate.hop.kind
	case len(j.hops) == 0:
		r.Status, r.To, r.Kind = StatusBlocked, j.gate.hop.to.Path, j.gate.hop.kind
		if j.err != nil {
			r.Conflict = isConflict(j.err)
			r.Reasons = append(r.Reasons, j.err.Error())
		}
		if r.Conflict {
			r.Status = StatusWaiting // another process moved it: not this command's to fix
		}
	default:
		j.moved(r)
	}
}

// moved fills in where the moves took the issue and what they left to do.
func (j journey) moved(r *Result) {
	r.Status, r.Version = StatusAdvanced, j.issue.Version
	last := j.hops[len(j.hops)-1]
	r.To, r.Kind = last.to.Path, last.kind
	hooked := j.hops
	if j.firstGated {
		hooked = hooked[1:] // the gate has said why the first move was made
	}
	for _, h := range hooked {
		r.Reasons = append(r.Reasons, h.reason)
	}
	for _, a := range j.arrivals {
		a.said.into(r)
	}
	if n := len(j.arrivals); n > 0 && n == len(j.hops) {
		final := j.arrivals[n-1]
		r.Unfinished, r.Instructions = final.failures, final.instructions
		if w := final.waiting; w != nil {
			// Moved, and the new stage's entry waits (CI running): that is
			// waiting, not unfinished work to fix.
			r.Status, r.RetryAfter, r.Class = StatusWaiting, w.RetryAfter, w.Class
			r.Reasons = append(r.Reasons, w.Reason)
		}
	}
	j.said.into(r)
	if j.err != nil {
		r.Warnings = append(r.Warnings, j.err.Error())
	}
	if last.kind == stages.MoveStepBack && j.stepBack != nil {
		r.Status, r.StepBack = StatusSteppedBack, j.stepBack
	}
}
