package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agenttree/agenttree/controller/polling"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

// schedule keeps the polling state of d in its watch.yaml after a pass
// that kept none in its own transaction (keep), in a transaction of its
// own, then tells of it (tell).
func (c *Controller) schedule(ctx context.Context, e *engine.Engine, d dueIssue, pr *forge.PR, o *engine.Outcome, batchErr error, rev polling.Reviews) (time.Duration, error) {
	tx, iss, err := c.lockSeen(ctx, e, d.iss, o)
	if err != nil {
		return c.interval(), err
	}
	k := c.keep(tx, e, d, iss, pr, o, batchErr, rev)
	tx.Unlock()
	return c.tell(ctx, e, k, o, batchErr)
}

// kept is the polling state keep wrote, for tell.
type kept struct {
	iss   *issues.Issue
	p     *issues.Poll
	rep   polling.Report
	again time.Duration
	now   time.Time
	// err is why it could not be written.
	err error
}

// keep writes, under tx (the issue's lock), the polling state of d as
// iss is after a pass (the head it is bound to, the interval, what the
// pass did), and says when to look again.
func (c *Controller) keep(tx *issues.Tx, e *engine.Engine, d dueIssue, iss *issues.Issue, pr *forge.PR, o *engine.Outcome, batchErr error, rev polling.Reviews) *kept {
	now := c.now()
	prev, err := tx.Poll()
	if err != nil {
		prev = nil
	}
	p, sig, rep := polling.Observe(prev, polling.Look{Issue: iss, PR: pr, Out: o, BatchErr: batchErr, Now: now, Resumed: d.resumed, Reviews: rev})
	again := polling.Adapt(time.Duration(p.IntervalS)*time.Second, pollingOf(e, iss), sig)
	if iss.PRNumber == 0 && o != nil && o.RetryAfter > 0 {
		again = o.RetryAfter // no PR to poll: what the hook asked for
	}
	if prev == nil && iss.PRNumber == 0 && (o == nil || o.RetryAfter == 0) {
		again = c.interval()
	}
	p.IntervalS, p.NextAt = int(again/time.Second), now.Add(again)
	if iss.PRNumber > 0 && o != nil && o.Status == engine.StatusWaiting && !o.Conflict && !polling.ForgeTrouble(o) && batchErr == nil && (p.Checks == nil || p.Checks.Queued == 0) {
		// Only a wait on the forge stretches (IntervalS keeps the interval
		// without the watch, for when it fails), not a CI run queued for
		// a slot (it starts only when someone looks), nor a forge that
		// failed to answer (no event tells when it answers again).
		p.NextAt = c.wake.Stretch(now, again)
		again = p.NextAt.Sub(now)
	}
	return &kept{iss: iss, p: p, rep: rep, again: again, now: now, err: tx.SetPoll(p)}
}

// tell logs the poll's one line once the lock is released, and says when
// to look again. Five forge errors in a row stop the issue for a person.
func (c *Controller) tell(ctx context.Context, e *engine.Engine, k *kept, o *engine.Outcome, batchErr error) (time.Duration, error) {
	iss, p, err := k.iss, k.p, k.err
	if iss.PRNumber > 0 {
		c.logPoll(ctx, iss.ID, p, k.rep, k.again, k.now)
	}
	if p.ForgeErrors >= polling.MaxForgeErrors && iss.Escalated == nil {
		why := fmt.Sprintf("%d errors in a row talking to the forge (last: %s); agenttree never takes that for a CI verdict", p.ForgeErrors, forgeError(o, batchErr))
		if _, eerr := e.Escalate(ctx, iss.ID, issues.EscalatedError, why); eerr != nil {
			err = errors.Join(err, eerr)
		}
	}
	return k.again, err
}

// logPoll is the one line per poll of a PR (docs/ARCHITECTURE.md §6).
// What the forge and the hooks said is data: names quoted when they are
// not plain, text made one line.
func (c *Controller) logPoll(ctx context.Context, id int, p *issues.Poll, rep polling.Report, next time.Duration, now time.Time) {
	c.log().LogAttrs(ctx, slog.LevelInfo, "poll",
		slog.Int("issue", id),
		slog.Int("pr", p.PR),
		slog.Int("iteration", p.Iteration),
		slog.Duration("elapsed", now.Sub(p.Started).Round(time.Second)),
		slog.Bool("actionable", rep.Actionable),
		slog.Int("new_failures", rep.NewFailures),
		slog.Int("new_threads", rep.NewThreads),
		slog.String("pending", "["+textsafe.Names(rep.Pending)+"]"),
		slog.String("status", textsafe.OneLine(p.Status)),
		slog.Duration("next", next))
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
