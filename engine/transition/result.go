package transition

import (
	"fmt"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/stages"
)

// said is what hooks had to say along a step: notes for the agent and
// warnings. Steps return it; the command's Result gathers it.
type said struct {
	notes, warnings []string
	// send are messages hooks asked to send the agent (send_message).
	send []string
	// escalations are hooks (or spent budgets) that called a person.
	escalations []escalation
}

// escalation is a call for a person, with the failure that spent a budget
// or opened the breaker (it counts, as a step back would have).
type escalation struct {
	issues.Escalation
	failure *policy.Failure
}

func (s *said) hook(notes, warnings []string) {
	s.notes = append(s.notes, notes...)
	s.warnings = append(s.warnings, warnings...)
}

func (s *said) escalate(node *stages.Node, kind issues.EscalationKind, reason string, f *policy.Failure) {
	e := escalation{Escalation: issues.Escalation{Kind: kind, Reason: reason}, failure: f}
	if node != nil {
		e.Stage = node.Path
	}
	s.escalations = append(s.escalations, e)
}

// add keeps what o said as well.
func (s *said) add(o said) {
	s.hook(o.notes, o.warnings)
	s.send = append(s.send, o.send...)
	s.escalations = append(s.escalations, o.escalations...)
}

func (s *said) warn(w ...string) { s.warnings = append(s.warnings, w...) }

// into adds what was said to the Result's notes and warnings.
func (s said) into(r *act.Result) {
	r.Notes = append(r.Notes, s.notes...)
	r.Warnings = append(r.Warnings, s.warnings...)
}

// findings are what one command's steps found, in the order they ran. The
// Result is made of them once, by result.
type findings struct {
	// issue is the issue as last read or written.
	issue *issues.Issue
	// approval is what a person's approval said: recorded on the forge,
	// or made again at a stage whose entry hooks refused unapproved
	// commits.
	approval said
	// unfinished names the stage whose entry hooks a dry run did not rerun.
	unfinished string
	// resumed is the rerun of entry hooks that had not finished.
	resumed *arrival
	// final says why the issue goes nowhere from here.
	final string
	// said is what hooks run outside any move had to say.
	said said
	// scope names what the messages hooks sent are about, for their keys
	// (empty: the issue's version).
	scope string
	// wait says who moves the issue on from here.
	wait    string
	skipped []string
	journey *journey
	// recheck is the move back through CI of a head pushed during a
	// review (prhead.Stale), made or, in a dry run, to make.
	recheck *prhead.Recheck
}

// result makes the command's Result from base (the issue as the command
// found it) and what its steps found.
func (f findings) result(r act.Result, dryRun bool) act.Result {
	f.approval.into(&r)
	f.said.into(&r)
	if f.resumed != nil {
		f.resumed.said.into(&r)
	}
	if f.issue != nil {
		r.Version = f.issue.Version
	}
	r.Skipped = f.skipped
	switch {
	case f.recheck != nil && f.journey == nil:
		// A dry run: what approving would do instead.
		r.Status, r.To, r.Kind = act.StatusSteppedBack, f.recheck.To.Path, stages.MoveManual
		r.Reasons = append(r.Reasons, f.recheck.Reason)
	case f.unfinished != "":
		r.Status = act.StatusBlocked
		r.Reasons = append(r.Reasons, fmt.Sprintf("the entry hooks of %s did not finish; `agenttree next` runs them again", f.unfinished))
	case f.journey != nil:
		f.journey.into(&r, dryRun)
	case f.resumed != nil && len(f.resumed.failures) > 0:
		r.Status = act.StatusBlocked
		r.Reasons = append(r.Reasons, f.resumed.failures...)
	case f.resumed != nil && f.resumed.waiting != nil:
		r.Status, r.Outcome.RetryAfter, r.Class = act.StatusWaiting, f.resumed.waiting.RetryAfter, f.resumed.waiting.Class
		r.Reasons = append(r.Reasons, f.resumed.waiting.Reason)
	case f.resumed != nil && f.resumed.instructions != "" && f.final == "" && f.wait == "":
		r.Status, r.Instructions = act.StatusWaiting, f.resumed.instructions
	case f.wait != "":
		r.Status = act.StatusWaiting
		r.Reasons = append(r.Reasons, f.wait)
	default:
		r.Status = act.StatusFinal
		r.Reasons = append(r.Reasons, f.final)
	}
	if f.recheck != nil && (r.Status == act.StatusAdvanced || r.Status == act.StatusWaiting || r.Status == act.StatusSteppedBack) {
		// Not approved: the issue went back through CI (exit status 1).
		r.Status, r.StepBack = act.StatusSteppedBack, &act.StepBack{From: f.recheck.From.Path, To: f.recheck.To.Path, Reason: f.recheck.Reason}
		if f.recheck.Todo != "" {
			r.Instructions = f.recheck.Todo
		}
	}
	r.Reasons = dedupe(r.Reasons)
	return r
}

func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
