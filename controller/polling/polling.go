// Package polling is how the controller polls a PR (docs/ARCHITECTURE.md
// §6): what one pass saw, made the issue's next polling state, and the
// adaptive interval until the next pass. It decides; the controller
// reads and writes watch.yaml.
package polling

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// MaxForgeErrors consecutive errors talking to the forge stop an issue
// for a person: an outage is never taken for a CI verdict, but it is not
// waited out forever either.
const MaxForgeErrors = 5

// Signal is what a poll saw, for the interval.
type Signal int

const (
	Idle        Signal = iota
	Event              // a push, a new failure, a new review comment
	RateLimited        // the forge asked us to slow down
)

// Adapt is the next polling interval after cur (docs/ARCHITECTURE.md §6):
// additive increase while nothing happens (30 s, or the first interval
// when that is shorter, so a fast poll_interval stays fast for a while),
// back to at most the first interval on an event and halved below it, the
// maximum on a rate-limit answer; never below the configured minimum.
func Adapt(cur time.Duration, cfg stages.CIPolling, sig Signal) time.Duration {
	floor := cfg.MinInterval
	if floor <= 0 {
		floor = 30 * time.Second
	}
	ceiling := max(cfg.MaxInterval, floor)
	base := min(max(cfg.PollInterval, floor), ceiling)
	if cur <= 0 {
		return base
	}
	switch sig {
	case Event:
		cur = min(cur/2, base)
	case RateLimited:
		cur = ceiling
	default:
		cur += min(30*time.Second, base)
	}
	return min(max(cur, floor), ceiling)
}

// Look is what one pass over an issue saw, for its polling state.
type Look struct {
	Issue    *issues.Issue
	PR       *forge.PR
	Out      *engine.Outcome
	BatchErr error
	Now      time.Time
	// Resumed is when a person last resumed the issue; zero: never.
	Resumed time.Time
	Reviews Reviews
}

// reviews is what a pass found new of what reviewers said on the PR.
type Reviews struct {
	// N counts the comments, reviews and threads new since the last poll,
	// when the pass listed them.
	N int
	// Noted are the ids of those counted without being forwarded.
	Noted []string
}

// report is what a poll's log line says beyond its polling state.
type Report struct {
	NewFailures, NewThreads int
	Pending                 []string
	Actionable              bool
}

// Observe is the polling state after a pass over an issue, what the pass
// saw (a new head, a new set of failing checks, new review activity, a
// step back or a person's resume is an event; the forge's rate limit
// slows down), and the poll's report.
func Observe(prev *issues.Poll, l Look) (*issues.Poll, Signal, Report) {
	iss, pr, res, now := l.Issue, l.PR, l.Out, l.Now
	var p issues.Poll
	if prev != nil && prev.PR == iss.PRNumber {
		p = *prev
	} else {
		p = issues.Poll{PR: iss.PRNumber, Started: now, PushedAt: now}
	}
	p.Iteration++
	if p.Stage != iss.Stage {
		// Moved since the last Look: a new wait, from the first interval.
		p.Stage, p.IntervalS = iss.Stage, 0
	}
	sig := Idle
	if !p.PolledAt.IsZero() && l.Resumed.After(p.PolledAt) {
		// A person said to try again: from the first interval, not the
		// one that grew while the issue waited for them.
		p.IntervalS, sig = 0, Event
		p.Log(now, "resumed by a person: polling from the first interval")
	}
	p.PolledAt = now
	if n := len(iss.History); p.ForgeErrors >= MaxForgeErrors && n > p.ErrorsSince && iss.History[n-1].Kind == stages.MoveResume {
		// A person resumed it since the count spent its budget: count
		// afresh, once for that resume.
		p.ForgeErrors, p.ErrorsSince = 0, n
	}
	var rep Report
	head := iss.HeadSHA
	if pr != nil && pr.HeadSHA != "" {
		head = pr.HeadSHA
	}
	if pr != nil && pr.Checks != nil {
		sum := forge.Summarize(pr.Checks)
		p.Checks = &issues.Checks{Total: sum.Total, Pending: sum.Pending, Queued: sum.Queued, Passing: sum.Passing, Failing: sum.Failing}
		for _, ch := range pr.Checks {
			if !ch.State.Done() {
				rep.Pending = append(rep.Pending, ch.Name)
			}
		}
		slices.Sort(rep.Pending)
	}
	if head != "" && head != p.Head {
		if p.Head != "" {
			sig = Event
			p.Log(now, "new head "+gitx.ShortSHA(head))
		}
		p.Head, p.PushedAt = head, now
	}
	if pr != nil && pr.FeedbackMark != "" {
		if p.ReviewMark != "" && pr.FeedbackMark != p.ReviewMark {
			// Someone commented, reviewed or opened a thread: they may
			// well say more, or push, soon.
			sig = Event
		}
		p.ReviewMark = pr.FeedbackMark
	}
	failing := splitList(iss.Outputs["failed_checks"])
	if !slices.Equal(failing, p.Failing) {
		for _, f := range failing {
			if !slices.Contains(p.Failing, f) {
				rep.NewFailures++
			}
		}
		if len(failing) > 0 {
			sig = Event
		}
		p.Failing = failing
	}
	if res != nil && (res.Moved || res.Status == engine.StatusEscalated) {
		sig = Event
		rep.Actionable = true
		p.Log(now, res.Summary)
		p.FixAttempts = fixAttempts(p.FixAttempts, res)
	}
	rep.NewThreads = l.Reviews.N
	if len(l.Reviews.Noted) > 0 {
		p.Noted = append(slices.Clone(p.Noted), l.Reviews.Noted...)
	}
	rep.Actionable = rep.Actionable || rep.NewFailures > 0 || rep.NewThreads > 0
	if res != nil {
		p.Status = res.Summary
	}
	var rl *forge.RateLimitError
	if (res != nil && res.Class == hooks.ClassRateLimit) || errors.As(l.BatchErr, &rl) {
		sig = RateLimited
	}
	// The pass's own answer decides: a batch that failed was made up for
	// by the hooks asking the forge themselves.
	if ForgeTrouble(res) || (res == nil && l.BatchErr != nil) {
		p.ForgeErrors++
	} else {
		p.ForgeErrors = 0
	}
	return &p, sig, rep
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	slices.Sort(out)
	return out
}

// fixAttempts counts, per failing check, the step backs that sent the
// agent to fix it.
func fixAttempts(counts map[string]int, res *engine.Outcome) map[string]int {
	if res.Status != engine.StatusSteppedBack || res.Failure != hooks.ClassCIFailed {
		return counts
	}
	out := maps.Clone(counts)
	if out == nil {
		out = map[string]int{}
	}
	for _, check := range res.Checks {
		out[check]++
	}
	return out
}

// ForgeTrouble reports whether a pass's waiting is the forge's doing (an
// outage, a rate limit), not the code's.
func ForgeTrouble(o *engine.Outcome) bool {
	return o != nil && (o.Class == hooks.ClassForge || o.Class == hooks.ClassRateLimit)
}
