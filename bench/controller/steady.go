package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agenttree/agenttree/bench/internal/fixture"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues/scancache"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// tickTotals add up ticks of the steady state.
type tickTotals struct {
	n       int
	passes  int // issues worked on
	wall    time.Duration
	slowest time.Duration
	// each is every tick's wall time, for the median.
	each []time.Duration
}

func (t *tickTotals) add(due int, took time.Duration) {
	t.n++
	t.passes += due
	t.wall += took
	t.slowest = max(t.slowest, took)
	t.each = append(t.each, took)
}

// median is the middle tick's wall time: the first idle tick after the
// files settled reads every issue a busy tick wrote, once, and weighs
// on the mean.
func (t tickTotals) median() time.Duration {
	if t.n == 0 {
		return 0
	}
	each := slices.Clone(t.each)
	slices.Sort(each)
	return each[len(each)/2]
}

func (t tickTotals) mean() time.Duration {
	if t.n == 0 {
		return 0
	}
	return t.wall / time.Duration(t.n)
}

// steadyFigures are what the measured part of the steady state cost.
type steadyFigures struct {
	hours float64 // simulated
	// idle are the ticks with nothing due, busy those with issues due;
	// settled are the idle ticks that began scancache.SettleTime or more
	// of the wall clock after the last busy tick ended: every file that
	// tick wrote is settled then (the clock here runs hours in minutes,
	// so most idle ticks come right after a busy one, while the files it
	// wrote are still read again at every tick).
	idle, busy, settled tickTotals
	counts              []edge.Count
	total               int
}

// perPRHour is the figure the target is about: GitHub requests per
// watched PR per simulated hour.
func (f steadyFigures) perPRHour(prs int) float64 {
	return float64(f.total) / float64(prs) / f.hours
}

// steadyRun is the steady state: the controller ticks every step of the
// clock while the issues' CI never finishes. The requests of the warm-up
// are left out; those of the measured part are counted by kind.
type steadyRun struct {
	c     *controller.Controller
	clock *fixture.Clock
	step  time.Duration
	srv   *githubtest.Server
	// profile, when set, is the prefix of the measured part's profiles.
	profile string
	// progress is told the totals of each simulated hour, or of the
	// shorter part that ends the warm-up or the measured time.
	progress func(hour int, warm bool, t tickTotals)
}

func (s *steadyRun) run(ctx context.Context, warmup, measured time.Duration) (steadyFigures, error) {
	if _, err := s.advance(ctx, warmup, true); err != nil {
		return steadyFigures{}, err
	}
	s.srv.ResetCounts()
	stop, err := startProfiles(s.profile)
	if err != nil {
		return steadyFigures{}, err
	}
	f, err := s.advance(ctx, measured, false)
	if err := errors.Join(err, stop()); err != nil {
		return f, err
	}
	f.hours = measured.Hours()
	f.counts = s.srv.Counts()
	f.total = total(f.counts)
	return f, nil
}

// advance ticks once every step over d of the clock.
func (s *steadyRun) advance(ctx context.Context, d time.Duration, warm bool) (steadyFigures, error) {
	var f steadyFigures
	var hour tickTotals
	var wrote time.Time // when the last busy tick ended
	for elapsed := s.step; elapsed <= d; elapsed += s.step {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		s.clock.Advance(s.step)
		began := time.Now()
		sum, err := s.c.Tick(ctx)
		took := time.Since(began)
		if err == nil {
			err = stillWaiting(sum)
		}
		if err != nil {
			return f, fmt.Errorf("tick at %s of the clock: %w", elapsed, err)
		}
		switch {
		case sum.Due > 0:
			f.busy.add(sum.Due, took)
			wrote = began.Add(took)
		case began.Sub(wrote) >= scancache.SettleTime:
			f.settled.add(0, took)
			fallthrough
		default:
			f.idle.add(0, took)
		}
		hour.add(sum.Due, took)
		if elapsed%time.Hour == 0 || elapsed+s.step > d {
			if s.progress != nil {
				s.progress(int((elapsed+time.Hour-1)/time.Hour), warm, hour)
			}
			hour = tickTotals{}
		}
	}
	return f, nil
}

// stillWaiting checks that a tick of the steady state only waited: an
// issue that failed, moved or stopped would make the figures those of
// something else.
func stillWaiting(sum controller.Summary) error {
	if sum.Failed > 0 {
		return fmt.Errorf("%d of %d passes failed", sum.Failed, sum.Due)
	}
	for _, r := range sum.Results {
		if r.Status != engine.StatusWaiting {
			return fmt.Errorf("issue %d did not wait for CI: %s %v", r.Issue, r.Status, r.Reasons)
		}
	}
	return nil
}
