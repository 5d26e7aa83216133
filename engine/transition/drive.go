package transition

import (
	"fmt"
	"maps"
	"path/filepath"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/stages"
)

// hop is one move a command makes: where to, how, why, and the hook
// outputs its write keeps.
type hop struct {
	// from is the node the move counts as leaving for the stage entered
	// (its entry hooks run as if from there): the issue's stage, or for a
	// move a completion hook asks for, the stage that was completed.
	from    *stages.Node
	to      *stages.Node
	kind    stages.Move
	reason  string
	outputs map[string]string
	// failure is set for a step back a failed hook asked for: the move
	// counts against its budget and the circuit breaker.
	failure *policy.Failure
}

// journey is what one command did on the stage machine: the gate's
// decision on the move asked for, then every move written and what followed
// each, in order. The command's Result is built from it once.
type journey struct {
	// want is the move asked for; gate, what its gate decided (the move
	// itself, when it was not gated).
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
	stepBack *act.StepBack
}

// drive makes the move want of an issue at from, and follows where the
// hooks send the issue from there, up to maxChain moves. gated: want is
// the move asked for, and its gate decides first what is made of it (the
// moves hooks ask for are not gated). Each move is one that the stage
// machine allows from where the issue stands; the run records it once it
// is written.
func (t *Transition) drive(iss *issues.Issue, from *stages.Node, want hop, gated bool) journey {
	j := journey{want: want, firstGated: gated, issue: iss, gate: decision{status: act.StatusAdvanced, hop: want}}
	h := want
	if gated {
		j.gate = t.decide(iss, from, want.to, want.kind)
		if j.gate.status != act.StatusAdvanced || t.dryRun {
			return j
		}
		h = j.gate.hop
		if h.to.Path == want.to.Path && h.kind == want.kind {
			// The move as decided: with its reason, and the outputs of the
			// gate's hooks over those of the move asked for (a person's
			// approval), which its write keeps.
			h.outputs = merged(want.outputs, h.outputs)
		}
	}
	for {
		first, at := len(j.hops) == 0, t.run.At()
		// The machine refuses a move the config does not declare before
		// anything is written, and records the move once it is.
		err := t.run.Check(h.to.Path, h.kind)
		if err == nil {
			cur, werr := t.commit(j.issue, h)
			if werr != nil {
				j.err = werr
				return j
			}
			j.issue, j.hops = cur, append(j.hops, h)
			if h.kind == stages.MoveStepBack {
				j.stepBack = t.stepBackOf(cur, h)
			}
			err = t.run.Take(t.ctx, h.to.Path, h.kind)
		}
		switch {
		case err != nil && first:
			j.err = err
			return j
		case err != nil:
			j.said.warn(fmt.Sprintf("could not move the issue on from %s: %v", at, err))
			return j
		}
		a := t.arrive(j.issue, h)
		j.issue, j.arrivals = a.issue, append(j.arrivals, a)
		if a.next == nil {
			return j
		}
		if len(j.hops) > t.d.MaxChain {
			j.said.warn(fmt.Sprintf("stopped following redirects at %s after %d hops; check the hooks for a loop", h.to.Path, len(j.hops)-1))
			return j
		}
		h = *a.next
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

// stepBackOf describes the step back h, just written to cur.
func (t *Transition) stepBackOf(cur *issues.Issue, h hop) *act.StepBack {
	sb := &act.StepBack{From: h.from.Path, To: h.to.Path, Reason: h.reason, Message: h.reason}
	if f := h.failure; f != nil {
		sb.Reason, sb.Class, sb.Checks = f.Reason, string(f.Class), f.Checks()
		sb.Attempt, sb.MaxRetries = cur.Attempts[string(f.Class)], policy.Budget(t.d.Config, h.from, f.Class)
		if f.Feedback != "" {
			sb.Feedback = filepath.Join(t.d.Store.Dir(cur.ID), f.Feedback)
		}
	}
	return sb
}

// into fills in r what the command's moves did: where the issue went and
// why, what its hooks said, and what is left to do.
func (j journey) into(r *act.Result, dryRun bool) {
	j.gate.said.into(r)
	r.Reasons = append(r.Reasons, j.gate.reasons...)
	r.To = j.want.to.Path // until a move is written, where the command was going
	switch {
	case j.gate.status != act.StatusAdvanced:
		r.Status = j.gate.status
		if w := j.gate.wait; w != nil {
			r.Outcome.RetryAfter, r.Class = w.RetryAfter, w.Class
		}
	case dryRun:
		r.Status, r.To, r.Kind = act.StatusAdvanced, j.gate.hop.to.Path, j.gate.hop.kind
	case len(j.hops) == 0:
		r.Status, r.To, r.Kind = act.StatusBlocked, j.gate.hop.to.Path, j.gate.hop.kind
		if j.err != nil {
			r.Conflict = isConflict(j.err)
			r.Reasons = append(r.Reasons, j.err.Error())
		}
		if r.Conflict || atomicfile.DiskTrouble(j.err) {
			r.Status = act.StatusWaiting // moved by another, or a full disk: not this command's to fix
		}
	default:
		j.moved(r)
	}
}

// moved fills in where the moves took the issue and what they left to do.
func (j journey) moved(r *act.Result) {
	r.Status, r.Version = act.StatusAdvanced, j.issue.Version
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
			r.Status, r.Outcome.RetryAfter, r.Class = act.StatusWaiting, w.RetryAfter, w.Class
			r.Reasons = append(r.Reasons, w.Reason)
		}
	}
	j.said.into(r)
	if j.err != nil {
		r.Warnings = append(r.Warnings, j.err.Error())
	}
	if last.kind == stages.MoveStepBack && j.stepBack != nil {
		r.Status, r.StepBack = act.StatusSteppedBack, j.stepBack
	}
}
