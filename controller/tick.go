package controller

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/controller/agents"
	"github.com/agenttree/agenttree/controller/dueset"
	"github.com/agenttree/agenttree/controller/wake"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/memlimit"
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
	if err := c.fenced(ctx); err != nil {
		return Summary{}, err
	}
	e, err := c.reload()
	if err != nil {
		return Summary{}, err
	}
	if c.disk.blocked(e.Store.Root(), c.log()) {
		return Summary{}, nil
	}
	sum := c.tick(ctx, e)
	c.Metrics.Tick(time.Since(start), sum.Due, sum.Results)
	// The forge's limits are its answers' clock, not c.Now; a node asks
	// no forge.
	if !c.Node {
		c.limit.Record(e.Forge, e.Store.Root(), time.Now(), c.log())
	}
	return sum, nil
}

// tick is Tick's pass over e's issues.
func (c *Controller) tick(ctx context.Context, e *engine.Engine) Summary {
	known := func(ids []int) []*issues.Issue { return c.dueSet().Issues(e, ids, c.wallNow()) }
	keeper := &agents.Keeper{Issue: c.Issue, Tmux: c.tmuxClient(e), Log: c.log(), Now: c.now, Fence: c.Fence, Issues: known}
	here, keep := c.homes(ctx, e, known, keeper)
	if keep {
		keeper.Keep(ctx, e)
	}
	now := c.now()
	due := c.due(e, now, c.wake.Take(), here)
	var sum Summary
	if len(due) == 0 {
		return sum
	}
	work := context.WithoutCancel(ctx)
	// The PRs are fetched a few batches at a time (fetchAhead), and the
	// issues of a batch are worked on as soon as it is in, while the next
	// ones are fetched.
	parts := inBatches(due)
	fetch, emptied := c.fetcher(e)
	defer emptied()
	passes := runParts(ctx, parts, prefetch(ctx, work, fetch, parts), max(e.Config.Controller.Concurrency, 1), func(d dueIssue, batch *prBatch) pass {
		if c.fenced(work) != nil {
			return pass{skipped: true}
		}
		return c.work(work, e, d, batch)
	})
	for _, p := range passes {
		if p.skipped {
			continue
		}
		sum.Due++
		if p.err != nil {
			sum.Failed++
			c.disk.refusedBy(p.err)
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

// runParts works on the issues of parts, each by work as soon as its
// part's batch is in (fetched), at most limit at a time; once ctx is done
// no more start (the rest are skipped). Once every pass of a part is
// over, its batch is dropped (prBatch.done): the hooks of those passes
// were its only readers, and a tick holding every PR it fetched until
// the end kept 9 MiB live at 10,000 issues (bench/README.md). The last
// pass of a part drops it before it lets another pass start.
func runParts(ctx context.Context, parts []part, fetched []chan *prBatch, limit int, work func(dueIssue, *prBatch) pass) []pass {
	n := 0
	for _, p := range parts {
		n += len(p.due)
	}
	passes := make([]pass, n)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for k, part := range parts {
		batch := <-fetched[k]
		// left counts the part's passes in flight, and the loop's own
		// hold until every pass is started.
		var left atomic.Int64
		left.Add(1)
		over := func() {
			if left.Add(-1) == 0 {
				batch.done()
			}
		}
		for i, d := range part.due {
			at := part.start + i
			if ctx.Err() != nil {
				passes[at].skipped = true
				continue
			}
			sem <- struct{}{}
			wg.Add(1)
			left.Add(1)
			go func() {
				defer func() { over(); <-sem; wg.Done() }()
				passes[at] = work(d, batch)
			}()
		}
		over()
	}
	wg.Wait()
	return passes
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
// state says it is time, or the forge's watch named it (woke). What it
// knows of an issue whose files did not change since a tick before is
// what that tick read (package dueset).
func (c *Controller) due(e *engine.Engine, now time.Time, woke wake.Woken, here func(int) bool) []dueIssue {
	ids, err := e.Store.IDs()
	if err != nil {
		c.log().Error("listing issues", "err", err)
		return nil
	}
	if c.BoundMemory {
		memlimit.Bound(len(ids))
	}
	if c.Issue != 0 {
		ids = slices.DeleteFunc(ids, func(id int) bool { return id != c.Issue })
	}
	var out []dueIssue
	// The wall clock, not c.now: the files' change times are its.
	for _, ent := range c.dueSet().Facts(e, ids, c.wallNow()) {
		if ent == nil {
			continue
		}
		d := dueIssue{iss: ent.Issue, node: ent.Node, poll: ent.Poll, resumed: ent.Resumed}
		if here != nil && !here(d.iss.ID) && c.Node {
			continue
		}
		if active(d) {
			d.woken = woke.Names(d.iss, d.poll)
		}
		d.act = !c.Node && c.wants(d, now)
		if d.mail = ent.Pending || !ent.Told; d.act || d.mail {
			out = append(out, d)
		}
	}
	return out
}

// dueSet is what the ticks learned of each issue, for the next.
func (c *Controller) dueSet() *dueset.Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dues == nil {
		c.dues = &dueset.Set{Active: func(iss *issues.Issue, node *stages.Node) bool {
			return active(dueIssue{iss: iss, node: node})
		}, Told: c.told, Log: c.log()}
	}
	return c.dues
}

func (c *Controller) wallNow() time.Time {
	if c.wall != nil {
		return c.wall()
	}
	return time.Now()
}

// wants says whether the controller acts on d now (the engine's pass or
// the PR's watch): when its polling state says it is time, the issue
// moved since the last look, a person resumed it since, or the forge's
// watch named it. Mail alone never makes the controller act: a session
// that is not there yet must not turn every tick into a poll.
func (c *Controller) wants(d dueIssue, now time.Time) bool {
	if d.iss.Escalated != nil || !active(d) {
		return false
	}
	return d.poll == nil || d.poll.Stage != d.iss.Stage || !now.Before(c.wake.Due(d.poll.PolledAt, time.Duration(d.poll.IntervalS)*time.Second, d.poll.NextAt)) || c.Eager || d.resumed.After(d.poll.PolledAt) || d.woken
}

// active reports whether the controller acts on d at all: unfinished
// entry work, a controller stage that is not terminal, or an open PR
// outside a terminal stage. At a terminal stage whose entry work is done
// (the merge made) the issue is finished: nothing is left to do there,
// and its PR, merged or closed, is not polled.
func active(d dueIssue) bool {
	switch {
	case d.iss.EntryPending != nil:
		return true
	case d.node.Terminal() != stages.TerminalNone:
		return false
	}
	return d.node.Controller() || d.iss.PRNumber > 0
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
