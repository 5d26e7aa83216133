//go:build etcd

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/leader"
	"github.com/agenttree/agenttree/controller/nodes/etcdnodes"
	"github.com/agenttree/agenttree/engine"
)

// figures are what the run measured.
type figures struct {
	// leaderTicks are the elected controllers' ticks, wall time, but the
	// first of each term (firstTicks), which reads every issue.
	leaderTicks, firstTicks, nodeTicks []time.Duration
	failovers                          []failover
	actionErrs                         int
	errExamples                        []string
	escalated                          int
	prHours                            float64
	wall                               time.Duration
	simulated                          time.Duration
}

// failover is one kill of the elected controller: how long until another
// was elected, and until its first tick was done (acting).
type failover struct {
	killed, next    string
	elected, acting time.Duration
}

// drive runs the simulated time in lockstep: each step of -step moves the
// clock, runs what the agents, CI and people do by then, and one tick of
// the elected controller on that clock; every -node-every, a tick of
// every node. A failover's wall time passes on the simulated clock as it
// is (a lease is the wall clock's), the agents and CI going on meanwhile.
func (w *world) drive(ctx context.Context) error {
	began := time.Now()
	end := w.start.Add(time.Duration(w.o.hours * float64(time.Hour)))
	var kills []time.Time
	for k := range w.o.failovers {
		kills = append(kills, w.start.Add(time.Duration(float64(k+1)/float64(w.o.failovers+1)*w.o.hours*float64(time.Hour))))
	}
	if _, err := w.awaitLeader(ctx, nil); err != nil {
		return err
	}
	w.srv.ResetCounts()
	nextNodes, nextHour := w.start, w.start.Add(time.Hour)
	var compactAt, lastRev int64
	hourTicks, hourMoves := 0, 0
	for now := w.clk.Now(); now.Before(end); now = w.clk.Now() {
		if err := ctx.Err(); err != nil {
			return err
		}
		now = now.Add(w.o.step)
		w.clk.Set(now)
		w.fire(ctx, now)
		w.countPRs(w.o.step)
		kill := len(kills) > 0 && !now.Before(kills[0])
		if kill {
			kills = kills[1:]
		}
		if err := w.tickLeader(ctx, kill); err != nil {
			return err
		}
		hourTicks++
		if err := w.assign(ctx); err != nil {
			return err
		}
		if !now.Before(nextNodes) {
			w.tickNodes(ctx)
			nextNodes = now.Add(w.o.nodeEvery)
		}
		if !now.Before(nextHour) {
			moves := w.movesMade()
			fmt.Fprintf(w.out, "  hour %.0f: %d leader ticks, %d moves made, %d open PRs, %s of wall time so far\n",
				now.Sub(w.start).Hours(), hourTicks, moves-hourMoves, w.openPRs(), secs(time.Since(began)))
			hourTicks, hourMoves = 0, moves
			nextHour = nextHour.Add(time.Hour)
			// What a cluster's auto-compaction does: the revisions older
			// than an hour are dropped, so etcd's space stays bounded.
			if compactAt > 0 {
				_, _ = w.people.cli.Compact(ctx, compactAt)
			}
			if resp, err := w.people.cli.Get(ctx, w.prefix+"/last-id"); err == nil {
				compactAt, lastRev = lastRev, resp.Header.Revision
			}
		}
	}
	w.figs.wall = time.Since(began)
	w.figs.simulated = w.clk.Now().Sub(w.start)
	return nil
}

// fire runs the events due by now, -workers at a time: agents, CI and
// people act side by side.
func (w *world) fire(ctx context.Context, now time.Time) {
	due := w.due(now)
	sem := make(chan struct{}, w.o.workers)
	var wg sync.WaitGroup
	for _, e := range due {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := w.act(ctx, e); err != nil {
				w.mu.Lock()
				w.figs.actionErrs++
				if len(w.figs.errExamples) < 5 {
					w.figs.errExamples = append(w.figs.errExamples, err.Error())
				}
				w.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// tickLeader runs one tick of the elected controller. With kill, the
// controller is killed at a random moment of it, and the failover is
// measured: until another is elected, and until its first tick is done.
func (w *world) tickLeader(ctx context.Context, kill bool) error {
	c, err := w.awaitLeader(ctx, nil)
	if err != nil {
		return err
	}
	ctl, term := c.leading()
	if ctl == nil {
		return nil // its term ended just now: the next step finds the next
	}
	if !kill {
		w.tick(c, ctl, term)
		return nil
	}
	done := make(chan struct{})
	go func() { defer close(done); w.tick(c, ctl, term) }()
	last := time.Second
	if n := len(w.figs.leaderTicks); n > 0 {
		last = w.figs.leaderTicks[n-1]
	}
	select {
	case <-done:
	case <-time.After(time.Duration(rand.Int64N(int64(last) + 1))):
	}
	killed := time.Now()
	c.kill()
	<-done
	// Its supervisor starts it again: a standby from now on.
	w.killed++
	if err := w.startCtrl(ctx, fmt.Sprintf("%s-r%d", c.name, w.killed)); err != nil {
		return err
	}
	next, err := w.awaitLeader(ctx, c)
	if err != nil {
		return err
	}
	f := failover{killed: c.name, next: next.name, elected: time.Since(killed)}
	if ctl, term := next.leading(); ctl != nil {
		w.tick(next, ctl, term)
	}
	f.acting = time.Since(killed)
	w.figs.failovers = append(w.figs.failovers, f)
	fmt.Fprintf(w.out, "  failover at %s: %s killed, %s elected after %s, acting after %s\n",
		w.clk.Now().Sub(w.start).Round(time.Second), f.killed, f.next, secs(f.elected), secs(f.acting))
	return nil
}

// tick is one tick of c's controller within its term, timed; its results
// are what the controller made.
func (w *world) tick(c *ctrl, ctl *controller.Controller, term *leader.Term) {
	tctx, cancel := term.Within(c.ctx)
	defer cancel()
	began := time.Now()
	sum, err := ctl.Tick(tctx)
	took := time.Since(began)
	c.mu.Lock()
	first := c.first
	c.first = false
	c.mu.Unlock()
	w.mu.Lock()
	if first {
		w.figs.firstTicks = append(w.figs.firstTicks, took)
	} else {
		w.figs.leaderTicks = append(w.figs.leaderTicks, took)
	}
	w.mu.Unlock()
	if err != nil {
		return // its term ended, or it was killed
	}
	w.results(sum.Results)
}

// results are the controller's passes: the moves made, and what the
// agents and people do next.
func (w *world) results(rs []*engine.Result) {
	for _, r := range rs {
		w.made(r, "controller")
		if r.Escalated != nil {
			w.mu.Lock()
			w.figs.escalated++
			w.mu.Unlock()
		}
		switch {
		case r.Conflict || r.From == r.To:
		case r.To == stageImplement:
			w.schedule(w.pace(w.o.fix), event{kind: evWork, id: r.Issue})
		case r.To == stageReview:
			w.schedule(w.pace(w.o.review), event{kind: evApprove, id: r.Issue})
		}
	}
}

// awaitLeader waits for a controller other than not to lead; the wall
// time it takes passes on the simulated clock too, with what the agents
// and CI do meanwhile.
func (w *world) awaitLeader(ctx context.Context, not *ctrl) (*ctrl, error) {
	last := time.Now()
	timeout := time.After(5 * time.Minute)
	for {
		for _, c := range w.ctrls {
			if ctl, _ := c.leading(); ctl != nil && c != not {
				return c, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, errors.New("no controller was elected within 5 minutes")
		case <-time.After(50 * time.Millisecond):
		}
		if not != nil {
			d := time.Since(last)
			last = time.Now()
			w.clk.Set(w.clk.Now().Add(d))
			w.fire(ctx, w.clk.Now())
			w.countPRs(d)
		}
	}
}

// assign starts the agents of the issues the elected controller gave a
// node since the last step.
func (w *world) assign(ctx context.Context) error {
	w.mu.Lock()
	n := len(w.waiting)
	w.mu.Unlock()
	if n == 0 {
		return nil
	}
	assigned, err := etcdnodes.New(w.people.cli, w.prefix).Assigned(ctx)
	if err != nil {
		return err
	}
	var started []int
	w.mu.Lock()
	for id := range w.waiting {
		if nd := w.byName[assigned[id]]; nd != nil {
			delete(w.waiting, id)
			w.agents[id] = &agent{node: nd}
			started = append(started, id)
		}
	}
	w.mu.Unlock()
	for _, id := range started {
		w.schedule(w.pace(w.o.work), event{kind: evWork, id: id})
	}
	return nil
}

// tickNodes ticks every node, as many at once as there are CPUs, each
// timed.
func (w *world) tickNodes(ctx context.Context) {
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for _, n := range w.nodes {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			began := time.Now()
			if _, err := n.c.Tick(n.ctx); err != nil {
				return
			}
			took := time.Since(began)
			w.mu.Lock()
			w.figs.nodeTicks = append(w.figs.nodeTicks, took)
			w.mu.Unlock()
		}()
	}
	wg.Wait()
}

// countPRs adds the PR-hours of d: the PRs open on the fake, those
// opened since the last count included.
func (w *world) countPRs(d time.Duration) {
	for n := w.srv.PRCount(); w.knownPRs < n; {
		w.knownPRs++
		w.openPR[w.knownPRs] = true
	}
	for n := range w.openPR {
		if pr, ok := w.srv.PR(n); !ok || pr.State != "open" {
			delete(w.openPR, n)
		}
	}
	w.figs.prHours += float64(len(w.openPR)) * d.Hours()
}

func (w *world) openPRs() int { return len(w.openPR) }

func (w *world) movesMade() int {
	w.tally.mu.Lock()
	defer w.tally.mu.Unlock()
	n := 0
	for _, m := range w.tally.moves {
		for _, k := range m {
			n += k
		}
	}
	return n
}
