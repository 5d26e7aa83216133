package controller

import (
	"context"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/hooks"
)

// Progress is one wait of Drive, for a progress line.
type Progress struct {
	Elapsed time.Duration
	Status  string
	Next    time.Duration
}

// Drive runs the controller's passes over one issue in the foreground
// (the same passes `agenttree controller --issue ID` makes) until the
// issue stops waiting: it moves, is blocked, steps back, or stops for a
// person. progress is called before each wait.
func Drive(ctx context.Context, load func() (*engine.Engine, error), id int, progress func(Progress)) (*engine.Result, error) {
	c := &Controller{Load: load, Issue: id, Eager: true}
	start := time.Now()
	for i := 1; ; i++ {
		sum, err := c.Tick(ctx)
		if err != nil {
			return nil, err
		}
		var res *engine.Result
		for _, r := range sum.Results {
			if r.Issue == id {
				res = r
			}
		}
		o := outcome(res)
		if o != nil && (o.Status != engine.StatusWaiting || o.RetryAfter == 0) {
			return res, nil // moved, blocked, or waiting on someone else
		}
		if res == nil && sum.Due == 0 {
			return nil, nil // nothing for the controller to do
		}
		wait := time.Second
		if o != nil && o.RetryAfter > 0 {
			wait = o.RetryAfter
		}
		if o == nil || o.Class != hooks.ClassRateLimit {
			wait = min(wait, foreground(i))
		}
		if e := c.engine(); e != nil && e.Config.CIPolling.MaxInterval > 0 {
			wait = min(wait, e.Config.CIPolling.MaxInterval)
		}
		if progress != nil {
			status := "waiting"
			if o != nil {
				status = o.Summary
			}
			progress(Progress{Elapsed: time.Since(start), Status: status, Next: wait})
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// foreground is the longest wait before the i-th look again of a pass a
// person runs at a terminal: a second, a second more each look, at most
// maxForeground. The hooks' poll_interval is for the background loop; a
// person waiting on a 3 s CI is not kept 30 s. Only a forge's rate limit
// is waited out as it asks.
func foreground(i int) time.Duration {
	return min(time.Duration(i)*time.Second, maxForeground)
}

// maxForeground bounds foreground: a long CI run costs a request or two
// every five seconds while a person watches it, well within GitHub's
// hourly budget.
const maxForeground = 5 * time.Second
