package controller

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agenttree/agenttree/controller/agents"
	"github.com/agenttree/agenttree/controller/wake"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Summary is what one tick did.
type Summary struct {
	// Due counts the issues worked on; Failed those whose pass failed.
	Due, Failed int
	// Results are the engine's results of the passes, in id order.
	Results []*engine.Result
	// Soonest is the soonest an issue wants looking at again (0: none
	// asked).
	Soonest time.Duration
}

// Tick is one pass of the loop: the agents kept alive (agents.Keeper), then
// every due issue, its PR state fetched in batches, worked on
// concurrently up to controller.concurrency. Stopping ctx stops starting
// new work; the passes in flight finish.
func (c *Controller) Tick(ctx context.Context) (Summary, error) {
	start := time.Now()
	e, err := c.reload()
	if err != nil {
		return Summary{}, err
	}
	sum := c.tick(ctx, e)
	c.Metrics.Tick(time.Since(start), sum.Due, sum.Results)
	// The forge's limits are its answers' clock, not c.Now.
	c.recordLimit(e, time.Now())
	return sum, nil
}

// tick is Tick's pass over e's issues.
func (c *Controller) tick(ctx context.Context, e *engine.Engine) Summary {
	keeper := &agents.Keeper{Issue: c.Issue, Tmux: c.tmuxClient(e), Log: c.log(), Now: c.now}
	keeper.Keep(ctx, e)
	now := c.now()
	due := c.due(e, now, c.wake.Take())
	var sum Summary
	if len(due) == 0 {
		return sum
	}
	work := context.WithoutCancel(ctx)
	passes := make([]pass, len(due))
	limit := max(e.Config.Controller.Concurrency, 1)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	// The PRs are fetched a batch at a time, one request after another,
	// and the issues of a batch are worked on while the next is fetched.
	fetch := c.fetcher(e)
	for _, part := range inBatches(due) {
		batch := fetch(work, part.due)
		for i, d := range part.due {
			at := part.start + i
			if ctx.Err() != nil {
				passes[at].skipped = true
				continue
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				passes[at] = c.work(work, e, d, batch)
			}()
		}
	}
	wg.Wait()
	for _, p := range passes {
		if p.skipped {
			continue
		}
		sum.Due++
		if p.err != nil {
			sum.Failed++
		}
		if p.result != nil {
			sum.Results = append(sum.Results, p.result)
		}
		if p.again > 0 && (sum.Soonest == 0 || p.again < sum.Soonest) {
			sum.Soonest = p.again
		}
	}
	return sum
}

// dueIssue is an issue the tick works on, with its polling state.
type dueIssue struct {
	iss  *issues.Issue
	node *stages.Node
	poll *issues.Poll
	// resumed is when a person last resumed the issue (the watch state's
	// resumed_at); zero: never.
	resumed time.Time
	// woken: the forge's watch named its PR or head since the last tick.
	woken bool
	// act: the engine's pass or the PR's watch is due; mail: messages.
	act, mail bool
}

// due lists the issues to work on now: those in a controller stage, those
// with entry work unfinished (terminal stages included), those with an
// open PR to watch, and any with messages waiting — each when its polling
// state says it is time, or the forge's watch named it (woke).
func (c *Controller) due(e *engine.Engine, now time.Time, woke wake.Woken) []dueIssue {
	ids, err := e.Store.IDs()
	if err != nil {
		c.log().Error("listing issues", "err", err)
		return nil
	}
	var out []dueIssue
	for _, id := range ids {
		if c.Issue != 0 && id != c.Issue {
			continue
		}
		iss, err := e.Store.Get(id)
		if err != nil {
			// One unreadable issue never stops the others.
			c.log().Error("reading issue", "issue", id, "err", err)
			continue
		}
		node, ok := e.Config.Node(iss.Stage)
		if !ok {
			c.log().Warn("issue at a stage the config does not declare", "issue", id, "stage", iss.Stage)
			continue
		}
		d := dueIssue{iss: iss, node: node}
		if active(d) {
			// Only the issues the controller acts on have a schedule.
			w, err := e.Store.ReadWatch(id)
			if err != nil {
				c.log().Warn("unreadable watch state; starting afresh", "issue", id, "err", err)
				w = &issues.WatchFile{}
			}
			d.poll = w.Poll
			d.resumed, _ = time.Parse(time.RFC3339Nano, w.Hooks[hooks.WatchResumedAt])
			d.woken = woke.Names(d.iss, d.poll)
		}
		if d.act, d.mail = c.wants(e, d, now); d.act || d.mail {
			out = append(out, d)
		}
	}
	return out
}

// wants says what the controller has to do on d now: act (the engine's
// pass or the PR's watch, when its polling state says it is time, the
// issue moved since the last look, a person resumed it since, or the
// forge's watch named it) and deliver its mail. Mail alone never
// makes the controller act: a session that is not there yet must not
// turn every tick into a poll.
func (c *Controller) wants(e *engine.Engine, d dueIssue, now time.Time) (act, mail bool) {
	if d.iss.Escalated == nil && active(d) {
		act = d.poll == nil || d.poll.Stage != d.iss.Stage || !now.Before(c.wake.Due(d.poll.PolledAt, time.Duration(d.poll.IntervalS)*time.Second, d.poll.NextAt)) || c.Eager || d.resumed.After(d.poll.PolledAt) || d.woken
	}
	return act, c.hasMail(e, d.iss)
}

// active reports whether the controller acts on d at all: a controller
// stage, unfinished entry work, or an open PR outside a terminal stage.
func active(d dueIssue) bool {
	switch {
	case d.node.Controller(), d.iss.EntryPending != nil:
		return true
	case d.iss.PRNumber > 0 && d.node.Terminal() == stages.TerminalNone:
		return true
	}
	return false
}

// pass is what working on one issue came to.
type pass struct {
	result  *engine.Result
	again   time.Duration
	err     error
	skipped bool
}

// work is the controller's pass over one due issue: messages first (what
// the state says must be told), then the engine's pass or the PR watch,
// then the polling state, then the messages the pass made.
func (c *Controller) work(ctx context.Context, e *engine.Engine, d dueIssue, batch *prBatch) pass {
	log := c.log().With("issue", d.iss.ID)
	var p pass
	if d.act {
		p = c.act(ctx, e, d, batch)
		if p.err != nil && !errors.Is(p.err, context.Canceled) {
			log.Error("pass failed", "stage", d.iss.Stage, "err", p.err)
		}
	}
	// Unchanged by the pass, the issue the scan read is current.
	current := !d.act || (p.err == nil && p.result != nil && p.result.Outcome.Version == d.iss.Version && !p.result.Outcome.Conflict)
	c.mail(ctx, e, d.iss, current)
	return p
}
