package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/polling"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/hooks"
)

// dayFaults are the fake's faults over the day: a fifth of all requests,
// GitHub's transient failures (server errors, the load balancer's 502,
// both rate limits' refusals, connections dropped, requests never
// answered). Timeouts are the fewest: each costs the client's answer
// timeout of wall time.
var dayFaults = []faultShare{
	{githubtest.Fault500, 0.05},
	{githubtest.Fault502, 0.04},
	{githubtest.Fault429, 0.03},
	{githubtest.FaultSecondary, 0.03},
	{githubtest.FaultHangup, 0.04},
	{githubtest.FaultTimeout, 0.01},
}

// faultRate is the share of all requests the fake fails.
const faultRate = 0.2

// A simulated day of the controller's ticks against a GitHub that fails a
// fifth of its requests (docs/RELIABILITY.md): issues' agents push, CI
// runs on each head and fails where the test says, the controller steps
// the issue back for it and only for it, people approve, the controller
// merges. Nothing crashes, nothing is stepped back or stopped for the
// forge's errors, every issue is merged by the end of the day, and the
// requests stay within the controller's budget, far inside GitHub's
// 5,000 an hour. The day is seeded: the same faults fall on the same
// requests at every run.
func TestADayOfGitHubFaults(t *testing.T) {
	const (
		seed   = 21
		issues = 24
		step   = 30 * time.Second // every polling interval is a multiple of it (bench/README.md)
		day    = 24 * time.Hour
		// starts spreads the issues' first pushes over the working day;
		// each then takes a few hours (CI, fixes, a review).
		starts = 14 * time.Hour
	)
	began := time.Now()
	// An answer timeout a held request costs in wall time, and no busy
	// machine makes a request of the fake's take.
	d := newFaultyDay(t, seed, 500*time.Millisecond)
	failures := []int{0, 1, 2, 1} // CI runs failed before one passes, by issue
	for n := range issues {
		d.create(t, n, time.Duration(n)*starts/issues+d.pace(30*time.Minute), failures[n%len(failures)])
	}
	failShares(d.srv, dayFaults)
	d.perHour = make([]int, int(day/time.Hour))
	last := d.srv.TotalRequests()
	for d.now.Before(d.start.Add(day)) {
		d.now = d.now.Add(step)
		d.fire(t)
		states := d.srv.Queries("PRStates")
		sum, err := d.c.Tick(context.Background())
		require.NoError(t, err)
		require.Zero(t, sum.Failed, "passes failed at %s", d.now.Sub(d.start))
		if d.srv.Queries("PRStates") > states {
			d.polled++
		}
		d.results(t, sum.Results)
		total := d.srv.TotalRequests()
		d.perHour[int(d.now.Sub(d.start)-1)/int(time.Hour)] += total - last
		last = total
		d.prHours += float64(d.openPRs()) * step.Hours()
	}
	d.report(t, time.Since(began))
	d.check(t)
	d.checkBudget(t)
}

// results is what the controller's passes did: a step back is checked
// against the runs the test failed (and the agent fixes it), a move to
// review brings a person's approval, and a wait on the forge counts in
// the issue's streak. The agents take their messages.
func (d *faultyDay) results(t *testing.T, rs []*engine.Result) {
	t.Helper()
	for _, r := range rs {
		is := d.issues[r.Issue]
		require.NotNil(t, is, "a result for issue %d", r.Issue)
		d.take(t, is)
		o := r.Outcome
		if polling.ForgeTrouble(&o) {
			d.waits++
			is.streak++
			is.longest = max(is.longest, is.streak)
		} else {
			is.streak = 0
		}
		switch {
		case r.Status == engine.StatusSteppedBack:
			if is.failed == "" || o.Failure != hooks.ClassCIFailed {
				is.falseBacks = append(is.falseBacks, fmt.Sprintf("at %s: %s", d.now.Sub(d.start), o.Summary))
			} else {
				is.stepBacks++
			}
			is.failed = ""
			d.at(d.pace(30*time.Minute), dayEvent{kind: evPush, id: is.id})
		case o.Moved && r.To == "review":
			d.at(d.pace(time.Hour), dayEvent{kind: evApprove, id: is.id})
		}
	}
}

// openPRs counts the PRs open on the fake.
func (d *faultyDay) openPRs() int {
	open := 0
	for n := 1; n <= d.srv.PRCount(); n++ {
		if pr, ok := d.srv.PR(n); ok && pr.State == "open" {
			open++
		}
	}
	return open
}

func (d *faultyDay) report(t *testing.T, wall time.Duration) {
	t.Helper()
	total, ours, theirs := d.srv.TotalRequests(), d.gh.Stats(), d.peopleGH.Stats()
	faults := d.srv.FaultCounts()
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(faults)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, faults[k]))
	}
	var byKind []string
	for _, c := range d.srv.Counts() {
		name := c.Endpoint
		if c.Kind != "" {
			name = c.Kind
		}
		byKind = append(byKind, fmt.Sprintf("%s: %d", strings.ReplaceAll(name, "/repos/{owner}/{repo}", ""), c.Requests))
	}
	backs, falseBacks, longest, pushes := 0, 0, 0, 0
	for _, is := range d.issues {
		backs += is.stepBacks
		falseBacks += len(is.falseBacks)
		longest = max(longest, is.longest)
		pushes += is.pushes
	}
	t.Logf("a day of %d issues (%d pushes), a tick every 30s of the controller's clock: %s of wall time", len(d.issues), pushes, wall.Round(time.Millisecond))
	t.Logf("requests %d (%d answered 304); faults injected %d (%.1f%%): %s", total, d.srv.NotModified(), d.srv.FaultsSent(),
		100*float64(d.srv.FaultsSent())/float64(total), strings.Join(kinds, ", "))
	t.Logf("retries: the controller's client %d of %d requests sent (%d rate-limit answers), the people's %d of %d; passes that waited on the forge %d",
		ours.Retries, ours.Requests, ours.RateLimited, theirs.Retries, theirs.Requests, d.waits)
	t.Logf("step backs %d true, %d false; PRs merged %d; approvals the forge's errors blocked %d; longest streak of passes waiting on the forge %d (a person is called at %d)",
		backs, falseBacks, d.mergedPRs(), d.refusals, longest, polling.MaxForgeErrors)
	t.Logf("PR-hours %.1f: %.1f requests per PR-hour, of which %.1f the batched PR state (%d ticks queried it); busiest hour %d requests (GitHub allows 5,000)",
		d.prHours, float64(total)/d.prHours, float64(d.srv.Queries("PRStates"))/d.prHours, d.polled, slices.Max(d.perHour))
	t.Logf("requests by hour: %v", d.perHour)
	t.Logf("by kind: %s", strings.Join(byKind, ", "))
}

func (d *faultyDay) mergedPRs() int {
	merged := 0
	for n := 1; n <= d.srv.PRCount(); n++ {
		if pr, ok := d.srv.PR(n); ok && pr.State == "merged" {
			merged++
		}
	}
	return merged
}

// check is the day's verdict, issue by issue.
func (d *faultyDay) check(t *testing.T) {
	t.Helper()
	faults := d.srv.FaultCounts()
	for _, f := range dayFaults {
		assert.Positive(t, faults[f.fault.Name], "%s faults were injected", f.fault.Name)
	}
	assert.InDelta(t, faultRate, float64(d.srv.FaultsSent())/float64(d.srv.TotalRequests()), 0.02, "a fifth of the requests failed")
	for _, id := range slices.Sorted(maps.Keys(d.issues)) {
		is := d.issues[id]
		iss, err := d.e.Store.Get(id)
		require.NoError(t, err)
		assert.Empty(t, is.falseBacks, "issue %d was stepped back for no failed CI run", id)
		assert.Equal(t, is.planned, is.stepBacks, "issue %d: a step back for each failed run", id)
		assert.Equal(t, is.stepBacks, is.told["step_back"], "issue %d: its agent told of each step back", id)
		assert.Nil(t, iss.Escalated, "issue %d stopped for a person (longest forge streak %d)", id, is.longest)
		assert.Less(t, is.longest, polling.MaxForgeErrors, "issue %d", id)
		assert.Equal(t, "accepted", iss.Stage, "issue %d", id)
		assert.Nil(t, iss.EntryPending, "issue %d: its merge finished", id)
		pr, ok := d.srv.PR(iss.PRNumber)
		assert.True(t, ok && pr.State == "merged", "issue %d: PR #%d merged (%s)", id, iss.PRNumber, pr.State)
	}
	assert.Equal(t, len(d.issues), d.srv.PRCount(), "one PR an issue")
	assert.Empty(t, d.queue, "nothing left to do at the end of the day")
}

// checkBudget holds the requests to the controller's budget (bench/README.md):
// the PRs' state is one batched query a tick (⌈due/50⌉, and never 50 due
// here), a person's approval reads its PR once, and outside the batch a PR
// costs 2 requests to open (the open PR looked for, the create), a first
// look at each new head (its checks, statuses, comments, reviews and
// threads: 5), 2 for each failed run's log (the API's redirect, the blob)
// and 3 to merge (the PR read again, the merge, the branch deleted). A
// fault costs its retry, so each figure is 1/(1-faultRate) of a day
// without faults; a quarter over it is left for what a fault's answer
// lost (a create looked for again) and a failed batch's PRs read one by
// one.
func (d *faultyDay) checkBudget(t *testing.T) {
	t.Helper()
	var heads, failed, approvals int
	for _, is := range d.issues {
		heads += is.pushes
		failed += is.planned
		approvals += is.approvals
	}
	states := d.srv.Queries("PRStates")
	others := d.srv.TotalRequests() - states
	batched := float64(d.polled+approvals) / (1 - faultRate)
	outside := float64(2*len(d.issues)+5*heads+2*failed+3*len(d.issues)) / (1 - faultRate)
	assert.LessOrEqual(t, float64(states), 1.25*batched, "PR state queries: %d ticks queried, %d approvals", d.polled, approvals)
	assert.LessOrEqual(t, float64(others), 1.25*outside, "requests outside the batch: %d PRs, %d heads, %d failed runs", len(d.issues), heads, failed)
	assert.Less(t, slices.Max(d.perHour), 5000/10, "every hour far inside GitHub's 5,000")
}
