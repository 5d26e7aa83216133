package controller

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agenttree/agenttree/controller/polling"
	"github.com/agenttree/agenttree/controller/prbatch"
	"github.com/agenttree/agenttree/controller/prwatch"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// prBatch is the PR state a tick fetched for its due issues.
type prBatch struct {
	prs map[int]*forge.PR
	// err is why the batch could not be fetched (every PR of the tick
	// counts a forge error).
	err error
	// drop drops prs from the forge's batch (prbatch.Forge.Drop); nil:
	// they are not there.
	drop func()
}

// done says the passes over b's PRs are over: the forge's batch lets
// them go.
func (b *prBatch) done() {
	if b != nil && b.drop != nil {
		b.drop()
	}
}

func (b *prBatch) pr(number int) *forge.PR {
	if b == nil || number == 0 {
		return nil
	}
	return b.prs[number]
}

// left reports whether the forge answered the batch but left PR number
// out of it (see prwatch.Missed).
func (b *prBatch) left(number int) bool {
	return b != nil && b.err == nil && b.prs != nil && number != 0 && b.prs[number] == nil
}

// batchSize is how many PRs one batch of a tick fetches: one GraphQL
// request on GitHub.
const batchSize = 50

// part is a run of a tick's due issues whose PRs are fetched together.
type part struct {
	start int
	due   []dueIssue
}

// inBatches splits due into runs holding at most batchSize PRs to fetch.
func inBatches(due []dueIssue) []part {
	var out []part
	start, prs := 0, 0
	for i, d := range due {
		if d.iss.PRNumber > 0 && d.act {
			if prs == batchSize {
				out = append(out, part{start: start, due: due[start:i]})
				start, prs = i, 0
			}
			prs++
		}
	}
	return append(out, part{start: start, due: due[start:]})
}

// fetchAhead bounds the batches of PRs a tick fetches at once. GitHub's
// secondary rate limits (docs/ARCHITECTURE.md §6) allow at most 100
// requests in flight and bound the GraphQL points and the server's CPU
// time a minute; a batch of 50 PRs is one query, so 4 in flight make
// 10,000 due PRs 50 round trips instead of 200 (2.5 s at 50 ms), far
// inside both limits, and leave the rest of a busy host's requests (the
// hooks', the agents' gh) their share.
const fetchAhead = 4

// prefetch fetches the PRs of parts on work, fetchAhead at a time, in
// order; each part's batch comes on its own channel. Once ctx is done no
// more is fetched: the parts left get an empty batch (their passes are
// skipped).
func prefetch(ctx, work context.Context, fetch func(context.Context, []dueIssue) *prBatch, parts []part) []chan *prBatch {
	out := make([]chan *prBatch, len(parts))
	for i := range out {
		out[i] = make(chan *prBatch, 1)
	}
	go func() {
		slots := make(chan struct{}, fetchAhead)
		for i, p := range parts {
			slots <- struct{}{}
			if ctx.Err() != nil {
				<-slots
				out[i] <- &prBatch{}
				continue
			}
			go func() {
				defer func() { <-slots }()
				out[i] <- fetch(work, p.due)
			}()
		}
	}()
	return out
}

// fetcher returns what fetches the PRs of a part of a tick into the
// forge's batch (emptied first), for the hooks of the tick to read, and
// what empties the batch once the tick is over: it is the state of the
// PRs when the tick fetched them, for the tick. Between ticks the engine
// (the agents' socket answers `next` with it, controller/api) reads the
// forge: a batch kept answered gates with the PRs as they were, however
// long ago.
func (c *Controller) fetcher(e *engine.Engine) (fetch func(context.Context, []dueIssue) *prBatch, emptied func()) {
	bf, ok := e.Forge.(*prbatch.Forge)
	if !ok {
		return func(context.Context, []dueIssue) *prBatch { return &prBatch{} }, func() {}
	}
	bf.Reset()
	return func(ctx context.Context, due []dueIssue) *prBatch {
		var numbers []int
		for _, d := range due {
			if d.iss.PRNumber > 0 && d.act {
				numbers = append(numbers, d.iss.PRNumber)
			}
		}
		prs, err := bf.Fetch(ctx, numbers)
		if err != nil {
			c.log().Warn("fetching PR state", "prs", len(numbers), "err", err)
		}
		return &prBatch{prs: prs, err: err, drop: func() { bf.Drop(prs) }}
	}, bf.Reset
}

// act is the engine's pass over d (a controller stage, entry work
// unfinished) or the watch of its PR, then its polling state.
func (c *Controller) act(ctx context.Context, e *engine.Engine, d dueIssue, batch *prBatch) pass {
	log := c.log().With("issue", d.iss.ID)
	pr := batch.pr(d.iss.PRNumber)
	var res *engine.Result
	var err error
	var k *kept   // the polling state, when the pass's transaction kept it
	threads := -1 // not counted by forwarding
	var noted []string
	switch {
	case (d.node.Controller() || d.iss.EntryPending != nil) && !d.node.HumanReview():
		// What reviewers said is read from the PR the tick fetched, not
		// from the pass: read before it, not under the issue's lock.
		noted = prwatch.NewFeedback(ctx, e, d.watched(), pr, c.log())
		threads = len(noted)
		res, err = e.ReconcileSeenThen(ctx, d.iss, func(tx *issues.Tx, r *engine.Result) {
			k = c.keepIn(tx, e, d, pr, &r.Outcome, batch.err, polling.Reviews{N: threads, Noted: noted})
		})
	case d.node.Controller() || d.iss.EntryPending != nil:
		res, err = e.ReconcileSeen(ctx, d.iss)
		if err == nil && res.Outcome.Status == engine.StatusWaiting && res.Outcome.RetryAfter == 0 {
			// The controller's hooks of a review have run and a person
			// reviews: the PR is watched meanwhile, as at any review.
			watched, n, werr := prwatch.Watch(ctx, e, d.watched(), pr, c.now)
			if werr != nil || watched != nil {
				res, err = watched, werr
			}
			threads = n
		}
	case batch.left(d.iss.PRNumber):
		res, err = prwatch.Missed(ctx, e, d.watched())
	default:
		res, threads, err = prwatch.Watch(ctx, e, d.watched(), pr, c.now)
	}
	if errors.Is(err, atomicfile.ErrLocked) {
		// Someone else is moving the issue: look again soon.
		return pass{again: 2 * time.Second}
	}
	if err != nil {
		return pass{err: err, again: c.interval()}
	}
	o := outcome(res)
	switch {
	case o != nil && o.Escalation != nil:
		// A person is needed: above the passes' routine, and a record
		// changed outside agenttree above that.
		level := slog.LevelWarn
		if o.Escalation.Kind == issues.EscalatedTampered {
			level = slog.LevelError
		}
		log.Log(ctx, level, o.Summary, "from", o.From, "to", o.To, "status", o.Status, "kind", o.Escalation.Kind)
	case o != nil && o.Moved:
		log.Info(o.Summary, "from", o.From, "to", o.To, "status", o.Status)
	case o != nil:
		log.Debug(o.Summary, "stage", o.From, "status", o.Status)
	}
	for _, n := range notes(o) {
		log.Info(n, "stage", d.iss.Stage) // what hooks did: a PR opened, a branch rebased
	}
	if threads < 0 {
		noted = prwatch.NewFeedback(ctx, e, d.watched(), pr, c.log())
		threads = len(noted)
	}
	var again time.Duration
	if k != nil {
		again, err = c.tell(ctx, e, k, o, batch.err)
	} else {
		again, err = c.schedule(ctx, e, d, pr, o, batch.err, polling.Reviews{N: threads, Noted: noted})
	}
	if err != nil && !c.disk.refusedBy(err) {
		log.Warn("saving polling state", "err", err)
	}
	return pass{result: res, again: again}
}

// keepIn is keep in the transaction of d's pass, whose outcome is o: the
// issue and its watch state as the pass read them, not read again. What
// it wrote is the due set's for the next tick (dueset.Set.Wrote) when the
// pass left the issue as the tick read it.
func (c *Controller) keepIn(tx *issues.Tx, e *engine.Engine, d dueIssue, pr *forge.PR, o *engine.Outcome, batchErr error, rev polling.Reviews) *kept {
	iss := d.iss
	same := o.Version == d.iss.Version && !o.Conflict
	if !same {
		var err error
		if iss, err = tx.Get(); err != nil {
			return nil // the lock's own: schedule takes it again
		}
	}
	k := c.keep(tx, e, d, iss, pr, o, batchErr, rev)
	if same && k.err == nil {
		c.dueSet().Wrote(e, tx, d.iss, k.p)
	}
	return k
}

// outcome is what a pass's result leaves the controller to act on (the
// controller reads nothing of the people's report); nil for no pass.
func outcome(res *engine.Result) *engine.Outcome {
	if res == nil {
		return nil
	}
	return &res.Outcome
}

func notes(o *engine.Outcome) []string {
	if o == nil {
		return nil
	}
	return o.Notes
}

// watched is d as the PR's watch reads it.
func (d dueIssue) watched() prwatch.Due {
	return prwatch.Due{Issue: d.iss, Node: d.node, Poll: d.poll}
}
