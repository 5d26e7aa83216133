package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/internal/syncbuf"
)

// fastWait leaves ci_polling at its defaults (a first interval of 30 s)
// and asks wait_for_ci for a poll a second.
const fastWait = `
project: shop
forge: github
stages:
  - name: implement
  - name: pr_ready
    host: controller
    post_start:
      - wait_for_ci: {poll_interval: 1s}
    on_failure: {step_back_to: implement}
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
`

// The controller loop polls a controller stage's CI at wait_for_ci's
// poll_interval (growing from there while nothing happens), not at
// ci_polling's 30 s; and never faster than it, whatever the tick.
func TestTheControllerPollsAtTheWaitsPollInterval(t *testing.T) {
	r := newGitHubRigWith(t, fastWait)
	r.c.Now, r.c.Interval = nil, 50*time.Millisecond
	id, _, _ := r.waitingOnCI(t, 1)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.c.Run(ctx) }()

	// Polls 1 s, 2 s, 3 s, 4 s apart: five in about 10 s. At 30 s, 60 s,
	// 90 s apart they would take three minutes.
	require.Eventually(t, func() bool { return r.srv.Queries("PRStates") >= 5 }, 60*time.Second, 50*time.Millisecond,
		"the PR is polled at poll_interval: %v", r.srv.Counts())
	stop()
	require.NoError(t, <-done)
	elapsed := time.Since(start)

	polls := r.srv.Queries("PRStates")
	assert.LessOrEqual(t, polls, int(elapsed/time.Second)+2, "no faster than a poll a second, though the tick is 50 ms")
	w, err := r.e.Store.ReadWatch(id)
	require.NoError(t, err)
	require.NotNil(t, w.Poll)
	assert.Less(t, w.Poll.IntervalS, 30, "the interval grows from poll_interval, not from ci_polling's 30 s")
}

// A new review comment, review or thread on the PR is an event: the
// interval that grew while nothing happened is back to its first.
func TestReviewActivityBringsTheIntervalBack(t *testing.T) {
	for _, tt := range []struct {
		name string
		say  func(srv *githubtest.Server, pr int)
	}{
		{"a comment", func(srv *githubtest.Server, pr int) {
			srv.AddComment(pr, githubtest.Comment{Author: "reviewer", Body: "why this?"})
		}},
		{"a review thread", func(srv *githubtest.Server, pr int) {
			srv.AddThread(pr, githubtest.Thread{Path: "main.go", Line: 3, Comments: []githubtest.Comment{{Author: "reviewer", Body: "off by one"}}})
		}},
		{"a review", func(srv *githubtest.Server, pr int) {
			srv.AddReview(pr, githubtest.Review{Author: "reviewer", State: "CHANGES_REQUESTED", Body: "see the threads"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newGitHubRig(t) // poll_interval_s 1, max_interval_s 2
			id, _, _ := r.waitingOnCI(t, 1)
			for range 3 {
				r.tick(t)
			}
			require.Equal(t, 2, r.poll(t, id).IntervalS, "idle: grown to the maximum")

			tt.say(r.srv, r.pr(t, id))
			r.tick(t)
			p := r.poll(t, id)
			assert.Equal(t, 1, p.IntervalS, "review activity is an event")
			r.tick(t)
			assert.Equal(t, 2, r.poll(t, id).IntervalS, "and once: idle again after it")
		})
	}
}

// Each poll of a PR is one log line with the iteration, the time since
// the first poll, whether there is something to act on, the new failures
// and review threads and the pending checks; names from the forge are
// data, quoted when they are not plain.
func TestEveryPollIsOneLogLine(t *testing.T) {
	r := newGitHubRig(t)
	var buf syncbuf.Buffer
	r.c.Log = slog.New(slog.NewJSONHandler(&buf, nil))
	id, head, run := r.waitingOnCI(t, 1)
	lint := r.srv.AddCheckRun(head, githubtest.CheckRun{Name: "lint\nlevel=ERROR msg=forged", Status: "in_progress"})
	pr := r.pr(t, id)

	r.tick(t)
	r.tick(t)
	lines := pollLines(t, buf.String())
	require.Len(t, lines, 2, buf.String())
	first, second := lines[0], lines[1]
	assert.Equal(t, float64(id), first["issue"])
	assert.Equal(t, float64(pr), first["pr"])
	assert.Equal(t, float64(1), first["iteration"])
	assert.Equal(t, float64(2), second["iteration"])
	assert.Equal(t, float64(5*time.Second), second["elapsed"], "since the first poll, on the controller's clock")
	assert.Equal(t, false, second["actionable"])
	assert.Equal(t, float64(0), second["new_failures"])
	assert.Equal(t, float64(0), second["new_threads"])
	assert.Equal(t, `["lint\nlevel=ERROR msg=forged", test]`, second["pending"], "names quoted as data, sorted")
	assert.Contains(t, second["status"], "checks still running")
	assert.Contains(t, second, "next")

	r.srv.AddThread(pr, githubtest.Thread{Path: "main.go", Line: 3, Comments: []githubtest.Comment{{Author: "reviewer", Body: "off by one"}}})
	r.srv.CompleteCheckRun(run, "failure")
	r.tick(t)
	lines = pollLines(t, buf.String())
	require.Len(t, lines, 3)
	third := lines[2]
	assert.Equal(t, `["lint\nlevel=ERROR msg=forged"]`, third["pending"])
	r.srv.AddComment(pr, githubtest.Comment{Author: "reviewer", Body: "and this"})
	r.srv.CompleteCheckRun(lint, "failure")
	r.tick(t)
	lines = pollLines(t, buf.String())
	last := lines[len(lines)-1]
	assert.Equal(t, true, last["actionable"], "CI failed: %v", last)
	assert.Equal(t, float64(2), last["new_failures"], "%v", last)
	assert.Equal(t, float64(1), last["new_threads"], "the comment, counted at the controller's stage: %v", last)
	assert.Contains(t, last["status"], "stepped back")
}

// slowGitHub polls from 60 s, growing by 30 s while nothing happens.
const slowGitHub = `
project: shop
forge: github
ci_polling: {poll_interval_s: 60, min_interval_s: 30, max_interval_s: 300}
stages:
  - name: implement
  - name: pr_ready
    host: controller
    post_start:
      - wait_for_ci:
    on_failure: {step_back_to: implement}
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
`

// A person's resume is looked at on the next tick, whenever the grown
// interval would have had the next poll, and polling starts again from
// the first interval: the status shows a fresh poll, not one from before.
func TestResumeLooksAtOnceFromTheFirstInterval(t *testing.T) {
	r := newGitHubRigWith(t, slowGitHub)
	ctx := context.Background()
	// The resume is stamped on the wall clock: the polls before it are
	// made before it, the next one due after it.
	r.now = time.Now().Add(-100 * time.Second)
	id, _, _ := r.waitingOnCI(t, 1)
	r.tickAt(t, r.now)
	require.Equal(t, 60, r.poll(t, id).IntervalS)
	r.tickAt(t, r.now.Add(60*time.Second))
	require.Equal(t, 90, r.poll(t, id).IntervalS, "idle: grown")
	next := r.poll(t, id).NextAt
	_, err := r.e.Escalate(ctx, id, issues.EscalatedError, "5 errors in a row talking to the forge")
	require.NoError(t, err)
	_, err = people.Resume(ctx, r.e, id, engine.Actor{Kind: engine.ActorHuman}, "GitHub is back")
	require.NoError(t, err)

	r.now = time.Now().Add(time.Second)
	require.True(t, r.now.Before(next), "the grown interval's next poll is still to come")
	r.tickAt(t, r.now)
	p := r.poll(t, id)
	assert.Equal(t, 3, p.Iteration, "a resume is looked at at once")
	assert.Equal(t, 60, p.IntervalS, "from the first interval")
	assert.Equal(t, r.now.Add(time.Minute).UTC(), p.NextAt.UTC())
	assert.Equal(t, r.now.UTC(), p.PolledAt.UTC())
	assert.Contains(t, p.Status, "checks still running", "the status is the poll's after the resume")

	r.tickAt(t, r.now.Add(time.Second))
	assert.Equal(t, 3, r.poll(t, id).Iteration, "once: the resume does not make every tick a poll")
}

func (r *githubRig) tickAt(t *testing.T, at time.Time) Summary {
	t.Helper()
	r.now = at
	sum, err := r.c.Tick(context.Background())
	require.NoError(t, err)
	return sum
}

func (r *githubRig) poll(t *testing.T, id int) *issues.Poll {
	t.Helper()
	w, err := r.e.Store.ReadWatch(id)
	require.NoError(t, err)
	require.NotNil(t, w.Poll)
	return w.Poll
}

func (r *githubRig) pr(t *testing.T, id int) int {
	t.Helper()
	iss, err := r.e.Store.Get(id)
	require.NoError(t, err)
	return iss.PRNumber
}

// pollLines are the JSON log lines of polls.
func pollLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec), l)
		if rec["msg"] == "poll" {
			out = append(out, rec)
		}
	}
	return out
}

// pr wait stops after five polls in a row that could not talk to the
// forge, saying so, and never takes the outage for a CI verdict.
func TestWaitCIStopsAfterFiveForgeErrorsInARow(t *testing.T) {
	r := newGitHubRig(t)
	id, _, run := r.waitingOnCI(t, 1)
	// Old code waited on forever: bounded here, it fails instead.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A few errors that answers follow stop nothing.
	r.srv.FailNext(6, githubtest.Fault502)
	r.srv.CompleteCheckRun(run, "success")
	out, err := WaitCI(ctx, r.e, id, 10*time.Millisecond, nil)
	require.NoError(t, err)
	assert.True(t, out.Passed)

	id2, _, _ := r.waitingOnCI(t, 2)
	r.srv.FailRate(1, githubtest.Fault502)
	var phases []WaitPhase
	out, err = WaitCI(ctx, r.e, id2, 10*time.Millisecond, func(p WaitPhase) { phases = append(phases, p) })
	assert.Nil(t, out)
	var fe *ForgeErrorsError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, 5, fe.Errors)
	assert.Len(t, phases, 4, "the fifth error ends the wait")
	assert.Contains(t, err.Error(), "stopped after 5 errors in a row talking to the forge")
	assert.Contains(t, err.Error(), "this is no CI verdict")
	assert.Contains(t, err.Error(), fmt.Sprintf("agenttree pr wait %d", id2))
}

// The outcome says how many polls were made and how long they took.
func TestWaitCIOutcomeCountsIterationsAndElapsed(t *testing.T) {
	r := newGitHubRig(t)
	id, _, run := r.waitingOnCI(t, 1)
	polls := 0
	out, err := WaitCI(context.Background(), r.e, id, 10*time.Millisecond, func(p WaitPhase) {
		if polls++; polls == 3 {
			r.srv.CompleteCheckRun(run, "success")
		}
	})
	require.NoError(t, err)
	assert.True(t, out.Passed)
	assert.Equal(t, 4, out.Iterations, "three polls waiting, the fourth saw the verdict")
	assert.GreaterOrEqual(t, out.ElapsedS, int64(0))
	data, err := json.Marshal(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"iterations":4`)
	assert.Contains(t, string(data), `"elapsed_s":`)
}

// A person's `next` at a controller stage waits at their terminal: it
// looks again within seconds, not at the stage's 60 s poll_interval, and
// returns as soon as CI has passed.
func TestAPersonsPassLooksAgainWithinSeconds(t *testing.T) {
	r := newGitHubRigWith(t, slowGitHub)
	id, _, run := r.waitingOnCI(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var waits []time.Duration
	res, err := Drive(ctx, func() (*engine.Engine, error) { return r.e, nil }, id, func(p Progress) {
		waits = append(waits, p.Next)
		if len(waits) == 2 {
			r.srv.CompleteCheckRun(run, "success")
		}
	})
	require.NoError(t, err)
	require.NotNil(t, res)
	assert.Equal(t, "review", res.To, "CI passed: the pass moved the issue on")
	require.NotEmpty(t, waits)
	for _, w := range waits {
		assert.LessOrEqual(t, w, maxForeground, "a foreground wait is seconds: %v", waits)
	}
	assert.Equal(t, time.Second, waits[0], "the first look again is a second away")
}
