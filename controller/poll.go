package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

// maxForgeErrors consecutive errors talking to the forge stop an issue
// for a person: an outage is never taken for a CI verdict, but it is not
// waited out forever either.
const maxForgeErrors = 5

// signal is what a poll saw, for the interval.
type signal int

const (
	sigIdle        signal = iota
	sigEvent              // a push, a new failure, a new review comment
	sigRateLimited        // the forge asked us to slow down
)

// adapt is the next polling interval after cur (docs/ARCHITECTURE.md §6):
// additive increase while nothing happens (30 s, or the first interval
// when that is shorter, so a fast poll_interval stays fast for a while),
// back to at most the first interval on an event and halved below it, the
// maximum on a rate-limit answer; never below the configured minimum.
func adapt(cur time.Duration, cfg stages.CIPolling, sig signal) time.Duration {
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
	case sigEvent:
		cur = min(cur/2, base)
	case sigRateLimited:
		cur = ceiling
	default:
		cur += min(30*time.Second, base)
	}
	return min(max(cur, floor), ceiling)
}

// schedule keeps the polling state of d in its watch.yaml after a pass
// (the head it is bound to, the interval, what the pass did), logs the
// poll's one line, and says when to look again. Five forge errors in a row
// stop the issue for a person.
func (c *Controller) schedule(ctx context.Context, e *engine.Engine, d dueIssue, pr *forge.PR, o *engine.Outcome, batchErr error, rev reviews) (time.Duration, error) {
	now := c.now()
	tx, iss, err := c.lockSeen(ctx, e, d.iss, o)
	if err != nil {
		return c.interval(), err
	}
	prev, err := tx.Poll()
	if err != nil {
		prev = nil
	}
	p, sig, rep := observe(prev, look{iss: iss, pr: pr, out: o, batchErr: batchErr, now: now, resumed: d.resumed, reviews: rev})
	again := adapt(time.Duration(p.IntervalS)*time.Second, pollingOf(e, iss), sig)
	if iss.PRNumber == 0 && o != nil && o.RetryAfter > 0 {
		again = o.RetryAfter // no PR to poll: what the hook asked for
	}
	if prev == nil && iss.PRNumber == 0 && (o == nil || o.RetryAfter == 0) {
		again = c.interval()
	}
	p.IntervalS, p.NextAt = int(again/time.Second), now.Add(again)
	if iss.PRNumber > 0 && o != nil && o.Status == engine.StatusWaiting && !o.Conflict && !forgeTrouble(o) && batchErr == nil && (p.Checks == nil || p.Checks.Queued == 0) {
		// Only a wait on the forge stretches (IntervalS keeps the interval
		// without the watch, for when it fails), not a CI run queued for
		// a slot (it starts only when someone looks), nor a forge that
		// failed to answer (no event tells when it answers again).
		p.NextAt = c.wake.Stretch(now, again)
		again = p.NextAt.Sub(now)
	}
	err = tx.SetPoll(p)
	tx.Unlock()
	if iss.PRNumber > 0 {
		c.logPoll(ctx, iss.ID, p, rep, again, now)
	}
	if p.ForgeErrors >= maxForgeErrors && iss.Escalated == nil {
		why := fmt.Sprintf("%d errors in a row talking to the forge (last: %s); agenttree never takes that for a CI verdict", p.ForgeErrors, forgeError(o, batchErr))
		if _, eerr := e.Escalate(ctx, iss.ID, issues.EscalatedError, why); eerr != nil {
			err = errors.Join(err, eerr)
		}
	}
	return again, err
}

// look is what one pass over an issue saw, for its polling state.
type look struct {
	iss      *issues.Issue
	pr       *forge.PR
	out      *engine.Outcome
	batchErr error
	now      time.Time
	// resumed is when a person last resumed the issue; zero: never.
	resumed time.Time
	reviews reviews
}

// reviews is what a pass found new of what reviewers said on the PR.
type reviews struct {
	// n counts the comments, reviews and threads new since the last poll,
	// when the pass listed them.
	n int
	// noted are the ids of those counted without being forwarded.
	noted []string
}

// report is what a poll's log line says beyond its polling state.
type report struct {
	newFailures, newThreads int
	pending                 []string
	actionable              bool
}

// logPoll is the one line per poll of a PR (docs/ARCHITECTURE.md §6).
// What the forge and the hooks said is data: names quoted when they are
// not plain, text made one line.
func (c *Controller) logPoll(ctx context.Context, id int, p *issues.Poll, rep report, next time.Duration, now time.Time) {
	c.log().LogAttrs(ctx, slog.LevelInfo, "poll",
		slog.Int("issue", id),
		slog.Int("pr", p.PR),
		slog.Int("iteration", p.Iteration),
		slog.Duration("elapsed", now.Sub(p.Started).Round(time.Second)),
		slog.Bool("actionable", rep.actionable),
		slog.Int("new_failures", rep.newFailures),
		slog.Int("new_threads", rep.newThreads),
		slog.String("pending", "["+textsafe.Names(rep.pending)+"]"),
		slog.String("status", textsafe.OneLine(p.Status)),
		slog.Duration("next", next))
}

// observe is the polling state after a pass over an issue, what the pass
// saw (a new head, a new set of failing checks, new review activity, a
// step back or a person's resume is an event; the forge's rate limit
// slows down), and the poll's report.
func observe(prev *issues.Poll, l look) (*issues.Poll, signal, report) {
	iss, pr, res, now := l.iss, l.pr, l.out, l.now
	var p issues.Poll
	if prev != nil && prev.PR == iss.PRNumber {
		p = *prev
	} else {
		p = issues.Poll{PR: iss.PRNumber, Started: now, PushedAt: now}
	}
	p.Iteration++
	if p.Stage != iss.Stage {
		// Moved since the last look: a new wait, from the first interval.
		p.Stage, p.IntervalS = iss.Stage, 0
	}
	sig := sigIdle
	if !p.PolledAt.IsZero() && l.resumed.After(p.PolledAt) {
		// A person said to try again: from the first interval, not the
		// one that grew while the issue waited for them.
		p.IntervalS, sig = 0, sigEvent
		p.Log(now, "resumed by a person: polling from the first interval")
	}
	p.PolledAt = now
	if n := len(iss.History); p.ForgeErrors >= maxForgeErrors && n > p.ErrorsSince && iss.History[n-1].Kind == stages.MoveResume {
		// A person resumed it since the count spent its budget: count
		// afresh, once for that resume.
		p.ForgeErrors, p.ErrorsSince = 0, n
	}
	var rep report
	head := iss.HeadSHA
	if pr != nil && pr.HeadSHA != "" {
		head = pr.HeadSHA
	}
	if pr != nil && pr.Checks != nil {
		sum := forge.Summarize(pr.Checks)
		p.Checks = &issues.Checks{Total: sum.Total, Pending: sum.Pending, Queued: sum.Queued, Passing: sum.Passing, Failing: sum.Failing}
		for _, ch := range pr.Checks {
			if !ch.State.Done() {
				rep.pending = append(rep.pending, ch.Name)
			}
		}
		slices.Sort(rep.pending)
	}
	if head != "" && head != p.Head {
		if p.Head != "" {
			sig = sigEvent
			p.Log(now, "new head "+gitx.ShortSHA(head))
		}
		p.Head, p.PushedAt = head, now
	}
	if pr != nil && pr.FeedbackMark != "" {
		if p.ReviewMark != "" && pr.FeedbackMark != p.ReviewMark {
			// Someone commented, reviewed or opened a thread: they may
			// well say more, or push, soon.
			sig = sigEvent
		}
		p.ReviewMark = pr.FeedbackMark
	}
	failing := splitList(iss.Outputs["failed_checks"])
	if !slices.Equal(failing, p.Failing) {
		for _, f := range failing {
			if !slices.Contains(p.Failing, f) {
				rep.newFailures++
			}
		}
		if len(failing) > 0 {
			sig = sigEvent
		}
		p.Failing = failing
	}
	if res != nil && (res.Moved || res.Status == engine.StatusEscalated) {
		sig = sigEvent
		rep.actionable = true
		p.Log(now, res.Summary)
		p.FixAttempts = fixAttempts(p.FixAttempts, res)
	}
	rep.newThreads = l.reviews.n
	if len(l.reviews.noted) > 0 {
		p.Noted = append(slices.Clone(p.Noted), l.reviews.noted...)
	}
	rep.actionable = rep.actionable || rep.newFailures > 0 || rep.newThreads > 0
	if res != nil {
		p.Status = res.Summary
	}
	var rl *forge.RateLimitError
	if (res != nil && res.Class == hooks.ClassRateLimit) || errors.As(l.batchErr, &rl) {
		sig = sigRateLimited
	}
	// The pass's own answer decides: a batch that failed was made up for
	// by the hooks asking the forge themselves.
	if forgeTrouble(res) || (res == nil && l.batchErr != nil) {
		p.ForgeErrors++
	} else {
		p.ForgeErrors = 0
	}
	return &p, sig, rep
}

func forgeError(res *engine.Outcome, batchErr error) string {
	if batchErr != nil {
		return batchErr.Error()
	}
	if res != nil && res.Reason != "" {
		return res.Reason
	}
	return "unknown"
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

// pollingOf is how the PR of iss is polled: the config's ci_polling, with
// the poll_interval of the stage's own CI wait (wait_for_ci) as its first
// interval, and the interval of the stage's background watch
// (poll_pr_status) as its start and its ceiling when it names one.
func pollingOf(e *engine.Engine, iss *issues.Issue) stages.CIPolling {
	cfg := e.Config.CIPolling
	node, ok := e.Config.Node(iss.Stage)
	if !ok {
		return cfg
	}
	for _, h := range node.Hooks() {
		spec, ok := e.Hooks.Hook(h.Name)
		if !ok || !spec.Waits {
			continue
		}
		if d, ok := h.Params["poll_interval"].(time.Duration); ok && d > 0 {
			cfg.PollInterval = d
			cfg.MinInterval = min(cfg.MinInterval, d)
			cfg.MaxInterval = max(cfg.MaxInterval, d)
		}
		break
	}
	if w := e.Watcher(node); w != nil {
		if d, ok := w.Params["interval"].(time.Duration); ok && d > 0 {
			cfg.PollInterval, cfg.MaxInterval = d, d
			cfg.MinInterval = min(cfg.MinInterval, d)
		}
	}
	return cfg
}

// lockSeen takes seen's lock and the issue as it is now: seen itself when
// the pass left it as it was (no second read of issue.yaml per pass).
func (c *Controller) lockSeen(ctx context.Context, e *engine.Engine, seen *issues.Issue, res *engine.Outcome) (*issues.Tx, *issues.Issue, error) {
	if res == nil || res.Version != seen.Version || res.Conflict {
		return e.Store.Begin(ctx, seen.ID)
	}
	tx, err := e.Store.Lock(ctx, seen.ID)
	return tx, seen, err
}
