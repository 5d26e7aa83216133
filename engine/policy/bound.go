package policy

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/engine/breaker"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// ReasonLen bounds the reason an escalation gives, in runes: the one line
// a person is told; the failure's full text stays in the escalation's
// detail, the feedback document and the issue's outputs.
const ReasonLen = 300

// Summary is text as the one line of at most ReasonLen runes a person is
// told, without what only echoes the command that failed.
func Summary(text string) string { return breaker.Line(text, ReasonLen) }

// bound lets a step back for a failure through while its retry budget
// lasts and the circuit breaker is not open; otherwise the issue stops
// for a person. The failure that stops it is no step back: the budget
// shows it spent, not overspent (CountEscalation).
func (r *Runner) bound(o hooks.Outcome, snap *hooks.Issue, node *stages.Node) (hooks.Outcome, Called) {
	f := FailureOf(o, snap)
	if f == nil || r.DryRun {
		return o, Called{}
	}
	iss, err := r.Tx.Get()
	if err != nil {
		return o, Called{}
	}
	limit := Budget(r.Config, node, f.Class)
	if used := iss.Attempts[string(f.Class)]; used >= limit {
		o.Kind = hooks.KindEscalate
		o.Reason = Summary(fmt.Sprintf("%s again after %s for it, its budget (%d); last: %s",
			classWords(f.Class), steps(used), limit, o.Reason))
		return o, Called{Kind: issues.EscalatedBudget, Failure: f}
	}
	if _, open, why := f.count(deref(iss.Breaker), breaker.Thresholds(r.Config, node)); open {
		o.Kind = hooks.KindEscalate
		o.Reason = Summary("circuit breaker open: " + why + "; last: " + o.Reason)
		return o, Called{Kind: issues.EscalatedBreaker, Failure: f}
	}
	return o, Called{}
}

// steps says n step backs.
func steps(n int) string {
	if n == 1 {
		return "1 step back"
	}
	return fmt.Sprintf("%d step backs", n)
}

// StalledRetries is the budget of step backs of one issue for CI that
// gave no verdict (no_new_ci, polling_timeout, ci_cancelled,
// ci_environment), each kind its own: they
// are no CI failure and do not spend ci_polling.max_retries, but all the
// agent can do is push again, so the third time calls a person (CI
// itself needs one).
const StalledRetries = 2

// Budget is how many step backs for failures of class node allows: the
// stage's on_failure.max_retries, else the config's budget for the kind.
func Budget(cfg *stages.Config, node *stages.Node, class hooks.Class) int {
	if node != nil {
		if of := node.OnFailure(); of != nil && of.MaxRetries > 0 {
			return of.MaxRetries
		}
	}
	switch {
	case class == hooks.ClassConflict:
		return cfg.Conflicts.MaxConflictRetries
	case stalled(class):
		return StalledRetries
	}
	return cfg.CIPolling.MaxRetries
}

// stalled reports whether failures of class are CI that gave no verdict.
func stalled(class hooks.Class) bool {
	switch class {
	case hooks.ClassNoNewCI, hooks.ClassPollingTimeout, hooks.ClassCICancelled, hooks.ClassCIEnvironment:
		return true
	}
	return false
}

// Failure is what a step back for a failed hook counts against: its
// kind's budget, and the breaker's view of the head and what failed on it.
type Failure struct {
	Class   hooks.Class
	Reason  string
	Head    string
	Failing []breaker.Failure
	// Feedback is the document the hook wrote for the agent.
	Feedback string
	// CIPassed: CI passed on Head before this failure, which is not CI's
	// (a conflict found after CI on the same push).
	CIPassed bool
}

// count is the breaker b after f (breaker.Record): a pass of CI on f's
// head, before f, counts first (breaker.CIPassed), and a conflict is no
// verdict on the checks (breaker.Conflict).
func (f *Failure) count(b issues.Breaker, s breaker.Settings) (next issues.Breaker, open bool, why string) {
	if f.CIPassed {
		b = breaker.CIPassed(b, f.Head)
	}
	if f.Class == hooks.ClassConflict {
		return breaker.Conflict(b, f.Head, f.Failing, s)
	}
	return breaker.Record(b, f.Head, f.Failing, s)
}

// ofCI reports whether failures of class are CI's own verdict on a head:
// a pass of CI on the head before them was overruled, not made.
func ofCI(class hooks.Class) bool {
	return class == hooks.ClassCIFailed || stalled(class)
}

// FailureOf is the failure a step back is for, or nil for a step back a
// hook asked for on purpose (it has no class).
func FailureOf(o hooks.Outcome, snap *hooks.Issue) *Failure {
	if o.Kind != hooks.KindStepBack || o.Class == "" {
		return nil
	}
	f := &Failure{Class: o.Class, Reason: o.Reason, Head: cmp.Or(o.Outputs["head_sha"], snap.HeadSHA)}
	// The hooks before this one (wait_for_ci, then check_conflicts) gave
	// their outputs to snap: CI's verdict on the same head.
	f.CIPassed = !ofCI(f.Class) && f.Head != "" && cmp.Or(o.Outputs[stages.CIPassedSHA], snap.Outputs[stages.CIPassedSHA]) == f.Head
	// How each check failed (failure_details: "check<TAB>first lines",
	// the lines joined by " | "), else the failure's reason: the breaker
	// tells failures apart by it.
	for _, line := range strings.Split(o.Outputs["failure_details"], "\n") {
		if check, detail, ok := strings.Cut(line, "\t"); ok {
			f.Failing = append(f.Failing, breaker.Failure{Check: check, Detail: strings.ReplaceAll(detail, " | ", "\n")})
		}
	}
	if len(f.Failing) == 0 {
		for _, name := range strings.Split(o.Outputs["failed_checks"], ",") {
			if name = strings.TrimSpace(name); name != "" {
				f.Failing = append(f.Failing, breaker.Failure{Check: name, Detail: o.Reason})
			}
		}
	}
	if len(f.Failing) == 0 {
		f.Failing = []breaker.Failure{{Check: string(o.Class), Detail: o.Reason}}
	}
	for _, name := range slices.Sorted(maps.Keys(o.Files)) {
		if o.Files[name] != "" {
			f.Feedback = name
			break
		}
	}
	return f
}

// Count records the failure f, which stepped the issue back from stage,
// on the issue, in the write of the step back: its kind's budget, the
// breaker, and the failure's class and feedback document for what the
// agent is told.
func Count(cur *issues.Issue, f *Failure, cfg *stages.Config, stage string) {
	if cur.Attempts == nil {
		cur.Attempts = map[string]int{}
	}
	cur.Attempts[string(f.Class)]++
	record(cur, f, cfg, stage)
}

// CountEscalation records the failure f, which stopped the issue for a
// person at stage, in the write of the escalation: the breaker, which
// counted it to open, and the failure's class and feedback document. It
// spends no budget: the budget counts step backs, and there was none.
func CountEscalation(cur *issues.Issue, f *Failure, cfg *stages.Config, stage string) {
	record(cur, f, cfg, stage)
}

func record(cur *issues.Issue, f *Failure, cfg *stages.Config, stage string) {
	if cur.Outputs == nil {
		cur.Outputs = map[string]string{}
	}
	cur.Outputs[notice.OutClass] = string(f.Class)
	if f.Feedback == "" {
		delete(cur.Outputs, notice.OutFeedback)
	} else {
		cur.Outputs[notice.OutFeedback] = f.Feedback
	}
	node, _ := cfg.Node(stage)
	next, _, _ := f.count(deref(cur.Breaker), breaker.Thresholds(cfg, node))
	cur.Breaker = &next
}

// Passed closes the breaker of an issue that leaves from, a stage the
// controller checks, forward: what failed there passed, which is
// progress.
func Passed(cur *issues.Issue, from *stages.Node) {
	if cur.Breaker != nil && from != nil && from.Controller() {
		closed := breaker.Passed()
		cur.Breaker = &closed
	}
}

// Checks are the failing checks of a CI failure.
func (f *Failure) Checks() []string {
	if f.Class != hooks.ClassCIFailed {
		return nil
	}
	out := make([]string, len(f.Failing))
	for i, fl := range f.Failing {
		out[i] = fl.Check
	}
	return out
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
	case hooks.ClassCICancelled:
		return "CI's run was cancelled or timed out"
	case hooks.ClassCIEnvironment:
		return "CI failed for its environment (runner, network, disk)"
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
