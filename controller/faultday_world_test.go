package controller

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/forge"
	ghforge "github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// The day's pipeline: the agent's implement, the controller's pr_ready
// that opens the PR and waits for CI (a failure steps back), a person's
// review whose approval (with the PR approved on GitHub) moves it to
// accepted, where the controller merges. Every setting is the default
// (ci_polling, the budgets, the circuit breaker) but the passes, one at a
// time: the faults are drawn in the order requests reach the fake, and
// passes one after another keep that order the seed's.
const dayPipeline = `
project: shop
forge: github
controller: {concurrency: 1}
stages:
  - name: implement
  - name: pr_ready
    host: controller
    post_start:
      - ` + dayOpenPR + `:
      - wait_for_ci: {on_failure: step_back}
    pre_completion:
      - pr_ci_passed:
    on_failure: {step_back_to: implement, message: "{{failure_reason}}"}
  - name: review
    human_review: true
    pre_completion:
      - pr_approved:
  - name: accepted
    terminal: completion
    host: controller
    post_start:
      - merge_pr:
`

// dayOpenPR is create_pr without its git push, which the day's agents make
// on the fake themselves (a branch moved: no git server is behind it):
// it opens the issue's PR from its branch, or finds the one opened
// before, and waits out a forge that fails as create_pr does (bench/sim
// has the same hook).
const dayOpenPR = "day_open_pr"

func dayRegistry() *hooks.Registry {
	r := builtin.Registry()
	r.Register(hooks.Def{HookSpec: stages.HookSpec{Name: dayOpenPR, Outputs: []string{"pr_number", "pr_url", "head_sha"},
		Doc: "Opens the issue's PR from its branch as it is on the fake (the controller's day under faults)."},
		Run: func(ctx context.Context, c *hooks.Call) hooks.Outcome {
			pr, _, err := c.Env.Forge.EnsurePR(ctx, forge.NewPR{Branch: c.Issue.Branch, Base: "main", Title: c.Issue.Title})
			if err != nil {
				o := hooks.Pending(c.Settings().CIPolling.PollInterval, fmt.Sprintf("opening the PR of %s failed (will retry): %v", c.Issue.Branch, err))
				o.Class = hooks.ClassForge
				return o
			}
			out := hooks.Pass()
			out.Outputs = map[string]string{"pr_number": strconv.Itoa(pr.Number), "pr_url": pr.URL, "head_sha": pr.HeadSHA}
			return out
		}})
	return r
}

// faultShare is one kind of fault and the share of all requests it
// answers.
type faultShare struct {
	fault edge.Fault
	share float64
}

// failShares makes the fake answer each share of the requests with its
// fault: FailRate tries its rules in order, so each rule's rate is its
// share of what the rules before it let through.
func failShares(srv *githubtest.Server, shares []faultShare) {
	left := 1.0
	for _, s := range shares {
		srv.FailRate(s.share/left, s.fault)
		left -= s.share
	}
}

// dayIssue is what the test knows of one issue, as its agent, its CI and
// its people.
type dayIssue struct {
	id     int
	branch string
	pushes int
	// fails is how many of its CI runs the test fails before one
	// passes, of planned.
	fails, planned int
	// failed is the head whose CI run the test failed and no step back
	// has answered yet; a step back without one is false.
	failed     string
	stepBacks  int
	falseBacks []string
	// told counts the messages the agent took, by kind.
	told map[string]int
	// streak is the passes in a row that waited on the forge, and
	// longest the longest streak.
	streak, longest int
	// approvals counts the person's approvals, one more after each the
	// forge's errors blocked.
	approvals int
}

// dayEvent is what an agent, CI or a person does at a time of the day.
type dayEvent struct {
	at   time.Time
	kind int
	id   int
	run  int64
	fail bool
}

const (
	evPush    = iota // the agent pushes and runs next
	evCI             // a CI run ends
	evApprove        // a person approves the PR, then the issue
)

// faultyDay is the controller over issues whose PRs are on a fake GitHub
// that fails, on a clock the test moves, with the agents, CI and people
// the test plays.
type faultyDay struct {
	srv *githubtest.Server
	// gh is the controller's GitHub client, and e its engine, which the
	// agents' next goes through (the controller's socket); people run
	// commands of their own (people, with a client of its own).
	gh, peopleGH *ghforge.Client
	e, people    *engine.Engine
	c            *Controller
	now          time.Time
	start        time.Time
	rng          *rand.Rand
	issues       map[int]*dayIssue
	queue        []dayEvent
	// perHour is the requests of each simulated hour; prHours the PRs
	// open on the fake, summed at each step, times the step.
	perHour []int
	prHours float64
	// polled counts the ticks that fetched PR state: one batch each.
	polled int
	// refusals are approvals whose gate the forge's errors blocked; waits
	// the controller's passes that waited on the forge.
	refusals, waits int
}

func newFaultyDay(t *testing.T, seed uint64, answerTimeout time.Duration) *faultyDay {
	t.Helper()
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(dayPipeline), 0o644))
	reg := dayRegistry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	d := &faultyDay{srv: githubtest.New(t, githubtest.WithSeed(seed)), rng: rand.New(rand.NewPCG(seed, seed^0xda7)),
		issues: map[int]*dayIssue{}, start: time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)}
	d.now = d.start
	// GitHub's hourly limit runs on the wall clock, and the day passes in
	// a minute: the test counts the requests of each simulated hour.
	forever := time.Now().Add(365 * 24 * time.Hour)
	d.srv.SetRateLimit(edge.Core, 1<<30, 1<<30, forever)
	d.srv.SetRateLimit(edge.GraphQL, 1<<30, 1<<30, forever)
	client := func() *ghforge.Client {
		c, err := ghforge.New(context.Background(), ghforge.Options{
			Repo: d.srv.Owner + "/" + d.srv.Name, Host: "github.com", Token: d.srv.Token, BaseURL: d.srv.URL,
			AnswerTimeout: answerTimeout,
			// The retries' waits are wall time, and the controller's
			// clock is the test's: a wait would only slow the run.
			Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
		})
		require.NoError(t, err)
		return c
	}
	d.gh, d.peopleGH = client(), client()
	theirs, err := issues.Open(store.Root())
	require.NoError(t, err)
	d.people = engine.New(cfg, theirs, reg, nil, engine.WithForge(d.peopleGH))
	d.e = engine.New(cfg, store, reg, nil, engine.WithForge(d.gh))
	// No tmux server behind the socket: the agents take their messages
	// from their outboxes themselves (take).
	d.c = &Controller{Load: func() (*engine.Engine, error) { return d.e, nil }, Now: func() time.Time { return d.now },
		Tmux: &tmux.Client{Socket: filepath.Join(t.TempDir(), "no-tmux"), LockDir: store.Root()}}
	// The files' clock an hour on: a tick every 30 s of the controller's
	// clock finds what the one before wrote settled (scancache.SettleTime
	// is 2 s), which on the wall clock, a day in a minute, it is not, and
	// the due set would read those issues again at every tick.
	d.c.wall = func() time.Time { return time.Now().Add(time.Hour) }
	return d
}

// create makes issue n (0-based), its work beginning at begin and its
// CI failing fails times.
func (d *faultyDay) create(t *testing.T, n int, begin time.Duration, fails int) {
	t.Helper()
	iss, err := d.e.Create(context.Background(), engine.NewIssue{Title: fmt.Sprintf("Day work %d", n+1)})
	require.NoError(t, err)
	require.NotEmpty(t, iss.Branch)
	d.issues[iss.ID] = &dayIssue{id: iss.ID, branch: iss.Branch, fails: fails, planned: fails, told: map[string]int{}}
	d.at(begin, dayEvent{kind: evPush, id: iss.ID})
}

// at schedules e, after that much of the day's clock.
func (d *faultyDay) at(after time.Duration, e dayEvent) {
	e.at = d.now.Add(after)
	i, _ := slices.BinarySearchFunc(d.queue, e.at, func(q dayEvent, at time.Time) int {
		if q.at.After(at) {
			return 1
		}
		return -1 // after those at the same time: first come, first done
	})
	d.queue = slices.Insert(d.queue, i, e)
}

// pace is a random duration around m, from m/2 to 3m/2.
func (d *faultyDay) pace(m time.Duration) time.Duration {
	return m/2 + time.Duration(d.rng.Int64N(int64(m)))
}

// fire does what is due by now, in order.
func (d *faultyDay) fire(t *testing.T) {
	for len(d.queue) > 0 && !d.queue[0].at.After(d.now) {
		e := d.queue[0]
		d.queue = d.queue[1:]
		switch e.kind {
		case evPush:
			d.push(t, d.issues[e.id])
		case evCI:
			conclusion := "success"
			if e.fail {
				conclusion = "failure"
				d.issues[e.id].failed = d.headOf(t, e.id)
			}
			d.srv.CompleteCheckRun(e.run, conclusion)
		case evApprove:
			d.approve(t, d.issues[e.id])
		}
	}
}

// push is the agent's commit: its branch moved on the fake (the PR's head
// once there is a PR), a CI run started on it, and `agenttree next`,
// asked again with the same request id while it fails.
func (d *faultyDay) push(t *testing.T, is *dayIssue) {
	t.Helper()
	iss, err := d.e.Store.Get(is.id)
	require.NoError(t, err)
	require.Equal(t, "implement", iss.Stage, "issue %d: the agent pushes only at implement", is.id)
	is.pushes++
	sha := fmt.Sprintf("%08x%032x", is.id, is.pushes)
	if iss.PRNumber > 0 {
		d.srv.SetHead(iss.PRNumber, sha)
	} else {
		d.srv.SetBranch(is.branch, sha)
	}
	run := d.srv.AddCheckRun(sha, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	fail := is.fails > 0
	if fail {
		is.fails--
		d.srv.SetJobLog(run, fmt.Sprintf("=== RUN   TestDay%d\n--- FAIL: TestDay%d (0.01s)\n    day_test.go:%d: expected %d, got 0\nFAIL\n", is.id, is.id, is.pushes, is.pushes))
	}
	d.at(d.pace(15*time.Minute), dayEvent{kind: evCI, id: is.id, run: run, fail: fail})
	actor := engine.Actor{Kind: engine.ActorAgent, Role: stages.RoleDeveloper, Request: fmt.Sprintf("day-%d-%d", is.id, is.pushes)}
	for try := 0; ; try++ {
		r, err := d.e.Next(context.Background(), is.id, actor, false)
		if err == nil {
			require.Equal(t, "pr_ready", r.To, "issue %d: the agent's next: %v", is.id, r.Reasons)
			return
		}
		require.Less(t, try, 3, "issue %d: the agent's next: %v", is.id, err)
	}
}

// approve is a person approving the PR on GitHub, then the issue
// (`agenttree approve`); a gate the forge's errors blocked is tried
// again a little later, as a person would.
func (d *faultyDay) approve(t *testing.T, is *dayIssue) {
	t.Helper()
	iss, err := d.e.Store.Get(is.id)
	require.NoError(t, err)
	require.Equal(t, "review", iss.Stage, "issue %d", is.id)
	if pr, ok := d.srv.PR(iss.PRNumber); ok && pr.ReviewDecision != "APPROVED" {
		d.srv.AddReview(iss.PRNumber, githubtest.Review{Author: "reviewer", State: "APPROVED"})
		d.srv.SetReviewDecision(iss.PRNumber, "APPROVED")
	}
	is.approvals++
	r, err := d.people.Approve(context.Background(), is.id, engine.Actor{Kind: engine.ActorHuman}, false)
	require.NoError(t, err, "issue %d: approve", is.id)
	if !r.Outcome.Moved {
		d.refusals++
		d.at(d.pace(6*time.Minute), dayEvent{kind: evApprove, id: is.id})
	}
}

// take is the agent taking the messages its outbox holds for it, as its
// pane would have them typed.
func (d *faultyDay) take(t *testing.T, is *dayIssue) {
	t.Helper()
	_, err := d.e.Outbox(is.id).Carry(context.Background(), outbox.Courier{
		Send: func(_ context.Context, m outbox.Message, typed func(into string) error) error {
			is.told[m.Kind]++
			return typed("")
		},
		Takes: func(r outbox.Recipient) bool { return r == outbox.ToAgent },
	})
	require.NoError(t, err, "issue %d: the agent's messages", is.id)
}

func (d *faultyDay) headOf(t *testing.T, id int) string {
	t.Helper()
	iss, err := d.e.Store.Get(id)
	require.NoError(t, err)
	if pr, ok := d.srv.PR(iss.PRNumber); ok && iss.PRNumber > 0 {
		return pr.HeadSHA
	}
	sha, _ := d.srv.Branch(iss.Branch)
	return sha
}
