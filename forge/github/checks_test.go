package github

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

func TestCheckRunStateClassification(t *testing.T) {
	tests := []struct {
		status, conclusion string
		want               forge.CheckState
		queued             bool // not started yet
	}{
		{"queued", "", forge.CheckPending, true},
		{"in_progress", "", forge.CheckPending, false},
		{"waiting", "", forge.CheckPending, true},
		{"requested", "", forge.CheckPending, true},
		{"pending", "", forge.CheckPending, true},
		{"completed", "success", forge.CheckSuccess, false},
		{"completed", "neutral", forge.CheckNeutral, false},
		{"completed", "skipped", forge.CheckSkipped, false},
		{"completed", "failure", forge.CheckFailure, false},
		{"completed", "startup_failure", forge.CheckFailure, false},
		{"completed", "cancelled", forge.CheckCancelled, false},
		{"completed", "timed_out", forge.CheckTimedOut, false},
		{"completed", "action_required", forge.CheckActionRequired, false},
		{"completed", "stale", forge.CheckStale, false},
		{"completed", "something_new", forge.CheckFailure, false},
	}
	for _, tt := range tests {
		t.Run(tt.status+"/"+tt.conclusion, func(t *testing.T) {
			assert.Equal(t, tt.want, checkRunState(tt.status, tt.conclusion))
			assert.Equal(t, tt.queued, checkRunQueued(tt.status), "queued")
		})
	}
	for state, want := range map[string]forge.CheckState{
		"pending": forge.CheckPending, "expected": forge.CheckPending,
		"success": forge.CheckSuccess, "failure": forge.CheckFailure, "error": forge.CheckFailure,
	} {
		assert.Equal(t, want, statusState(state), state)
	}
}

func TestChecksPendingToSuccess(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{Branch: "feature", HeadSHA: sha1})
	build := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "build"})
	test := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	srv.AddStatus(sha1, "ci/external", "pending", "https://ci.example/1")

	checks, err := c.Checks(ctx, sha1)
	require.NoError(t, err)
	sum := forge.Summarize(checks)
	assert.Equal(t, forge.Summary{Total: 3, Pending: 3, Queued: 1}, sum)
	queued := map[string]bool{}
	for _, ch := range checks {
		queued[ch.Name] = ch.Queued
	}
	assert.Equal(t, map[string]bool{"build": true, "test": false, "ci/external": false}, queued,
		"a queued check run has not started; one in progress and a posted status have")
	prs, err := c.PRs(ctx, []int{n})
	require.NoError(t, err)
	for _, ch := range prs[n].Checks {
		assert.Equal(t, queued[ch.Name], ch.Queued, "the batched query: %s", ch.Name)
	}

	srv.CompleteCheckRun(build, "success")
	srv.CompleteCheckRun(test, "skipped")
	srv.AddStatus(sha1, "ci/external", "success", "https://ci.example/1")

	checks, err = c.Checks(ctx, sha1)
	require.NoError(t, err)
	assert.Equal(t, forge.Summary{Total: 3, Passing: 3}, forge.Summarize(checks))
	byName := map[string]forge.Check{}
	for _, ch := range checks {
		byName[ch.Name] = ch
		assert.Equal(t, sha1, ch.SHA)
	}
	assert.Equal(t, forge.CheckSuccess, byName["build"].State)
	assert.Equal(t, "check_run", byName["build"].Kind)
	assert.Equal(t, build, byName["build"].ID)
	assert.Equal(t, build, byName["build"].JobID, "an Actions check run's job id")
	assert.Contains(t, byName["build"].URL, fmt.Sprintf("/job/%d", build))
	assert.Equal(t, forge.CheckSkipped, byName["test"].State)
	assert.Equal(t, "status", byName["ci/external"].Kind)
	assert.Equal(t, "https://ci.example/1", byName["ci/external"].URL)

	// The batched query sees the same.
	prs, err = c.PRs(ctx, []int{n})
	require.NoError(t, err)
	assert.Equal(t, forge.Summary{Total: 3, Passing: 3}, forge.Summarize(prs[n].Checks))
}

func TestChecksPendingToFailure(t *testing.T) {
	tests := []struct {
		conclusion string
		want       forge.CheckState
	}{
		{"failure", forge.CheckFailure},
		{"timed_out", forge.CheckTimedOut},
		{"cancelled", forge.CheckCancelled},
		{"action_required", forge.CheckActionRequired},
		{"startup_failure", forge.CheckFailure},
		{"stale", forge.CheckStale},
	}
	for _, tt := range tests {
		t.Run(tt.conclusion, func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv)
			ctx := context.Background()
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
			lint := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "lint"})
			test := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
			srv.AddStatus(sha1, "deploy/preview", "pending", "")

			checks, err := c.Checks(ctx, sha1)
			require.NoError(t, err)
			assert.Equal(t, 3, forge.Summarize(checks).Pending)

			srv.CompleteCheckRun(lint, "success")
			srv.CompleteCheckRun(test, tt.conclusion)
			srv.AddStatus(sha1, "deploy/preview", "error", "")

			for _, via := range []string{"rest", "graphql"} {
				if via == "rest" {
					checks, err = c.Checks(ctx, sha1)
				} else {
					var prs map[int]*forge.PR
					prs, err = c.PRs(ctx, []int{n})
					if err == nil {
						checks = prs[n].Checks
					}
				}
				require.NoError(t, err, via)
				sum := forge.Summarize(checks)
				assert.Equal(t, 3, sum.Total, via)
				assert.Equal(t, 1, sum.Passing, via)
				assert.Equal(t, 2, sum.Failing, via)
				var failed []string
				for _, f := range sum.Failed {
					failed = append(failed, f.Name+"="+string(f.State))
				}
				assert.ElementsMatch(t, []string{"test=" + string(tt.want), "deploy/preview=failure"}, failed, via)
			}
		})
	}
}

func TestStaleResultsOfAnotherSHAIgnored(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{Branch: "feature", HeadSHA: sha1})
	old := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	srv.CompleteCheckRun(old, "failure")
	srv.AddStatus(sha1, "ci/external", "failure", "")

	// A push: the old head's failure must not count against the new head.
	srv.SetHead(n, sha2)
	srv.AddCheckRun(sha2, githubtest.CheckRun{Name: "test"})

	checks, err := c.Checks(ctx, sha2)
	require.NoError(t, err)
	require.Len(t, checks, 1)
	assert.Equal(t, sha2, checks[0].SHA)
	assert.Equal(t, forge.CheckPending, checks[0].State)

	// An abbreviated sha binds to the full one.
	checks, err = c.Checks(ctx, sha2[:7])
	require.NoError(t, err)
	require.Len(t, checks, 1)
	assert.Equal(t, sha2, checks[0].SHA)

	prs, err := c.PRs(ctx, []int{n})
	require.NoError(t, err)
	pr := prs[n]
	assert.Equal(t, sha2, pr.HeadSHA)
	require.Len(t, pr.Checks, 1)
	assert.Equal(t, sha2, pr.Checks[0].SHA)
	assert.Equal(t, forge.CheckPending, pr.Checks[0].State)

	// A head with no CI yet: checks fetched, and none.
	srv.SetHead(n, sha3)
	pr, err = c.PR(ctx, n)
	require.NoError(t, err)
	assert.NotNil(t, pr.Checks)
	assert.Empty(t, pr.Checks)
}

func TestChecksPaginateAndRollupOverflowFallsBackToREST(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	for i := range 130 {
		id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: fmt.Sprintf("shard-%03d", i)})
		srv.CompleteCheckRun(id, "success")
	}
	srv.AddStatus(sha1, "ci/external", "success", "")

	checks, err := c.Checks(ctx, sha1)
	require.NoError(t, err)
	assert.Len(t, checks, 131)
	assert.Equal(t, 2, srv.Requests(githubtest.EndpointCheckRuns), "two pages of 100")

	srv.ResetCounts()
	prs, err := c.PRs(ctx, []int{n})
	require.NoError(t, err)
	assert.Len(t, prs[n].Checks, 131, "rollup cut at 100, topped up from REST")
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointGraphQL))
}

func TestRerunAndLog(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	srv.AddPR(githubtest.PR{HeadSHA: sha1})
	job := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	ext := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "codecov", App: "codecov"})
	srv.CompleteCheckRun(job, "failure")
	srv.CompleteCheckRun(ext, "failure")
	srv.AddStatus(sha1, "jenkins", "failure", "")
	var log strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&log, "2025-01-02T03:04:05.1234567Z line %d\r\n", i)
	}
	srv.SetJobLog(job, "\ufeff"+log.String())

	checks, err := c.Checks(ctx, sha1)
	require.NoError(t, err)
	failed := forge.Summarize(checks).Failed
	require.Len(t, failed, 3)

	var actions, other forge.Check
	for _, ch := range failed {
		switch ch.Name {
		case "test":
			actions = ch
		case "codecov":
			other = ch
		}
	}
	tail, err := c.Log(ctx, actions, 3)
	require.NoError(t, err)
	assert.Equal(t, "line 298\nline 299\nline 300", tail)
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointJobLogs))
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointLogBlob), "followed the redirect to the log blob")

	tail, err = c.Log(ctx, other, 10)
	require.NoError(t, err)
	assert.Empty(t, tail, "a non-Actions check has no log")

	err = c.Rerun(ctx, failed)
	require.ErrorIs(t, err, forge.ErrNotRerunnable)
	assert.Contains(t, err.Error(), "jenkins")
	assert.Equal(t, []int64{job, ext}, srv.Reruns())
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointRerunJob))
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointRerequest))

	checks, err = c.Checks(ctx, sha1)
	require.NoError(t, err)
	sum := forge.Summarize(checks)
	assert.Equal(t, 2, sum.Pending, "the reruns replace the failed runs")
	assert.Equal(t, 1, sum.Failing)

	// The rerun job is running: asking again is not an error.
	for _, ch := range checks {
		if ch.Name == "test" {
			require.NoError(t, c.Rerun(ctx, []forge.Check{ch}))
		}
	}
}

// clock is a settable time for the fake server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// Checks carry when they started and finished, in both the REST and the
// GraphQL answer, so a result from before a rerun can be told from one
// after it.
func TestCheckTimes(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	clk := &clock{t: t0}
	srv := githubtest.New(t, githubtest.WithClock(clk.now))
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	build := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "build"})
	srv.AddStatus(sha1, "ci/external", "pending", "")

	both := func() map[string]map[string]forge.Check {
		t.Helper()
		rest, err := c.Checks(ctx, sha1)
		require.NoError(t, err)
		prs, err := c.PRs(ctx, []int{n})
		require.NoError(t, err)
		out := map[string]map[string]forge.Check{"rest": {}, "graphql": {}}
		for _, ch := range rest {
			out["rest"][ch.Name] = ch
		}
		for _, ch := range prs[n].Checks {
			out["graphql"][ch.Name] = ch
		}
		return out
	}

	clk.set(at(1))
	srv.SetCheckRunStatus(build, "in_progress")
	for via, checks := range both() {
		assert.Equal(t, at(1), checks["build"].StartedAt, via)
		assert.True(t, checks["build"].CompletedAt.IsZero(), via)
		assert.True(t, checks["ci/external"].CompletedAt.IsZero(), "%s: a pending status has not completed", via)
	}

	clk.set(at(4))
	srv.AddStatus(sha1, "ci/external", "failure", "")
	clk.set(at(5))
	srv.CompleteCheckRun(build, "failure")
	first := both()
	for via, checks := range first {
		assert.Equal(t, at(1), checks["build"].StartedAt, via)
		assert.Equal(t, at(5), checks["build"].CompletedAt, via)
		assert.Equal(t, at(4), checks["ci/external"].CompletedAt, via)
	}

	// A rerun: its result is newer than the one it replaces.
	clk.set(at(10))
	require.NoError(t, c.Rerun(ctx, []forge.Check{first["rest"]["build"]}))
	for via, checks := range both() {
		assert.Equal(t, forge.CheckPending, checks["build"].State, via)
		assert.True(t, checks["build"].CompletedAt.IsZero(), via)
	}
	runs := srv.CheckRuns(sha1)
	clk.set(at(12))
	srv.CompleteCheckRun(runs[len(runs)-1].ID, "success")
	clk.set(at(13))
	srv.AddStatus(sha1, "ci/external", "success", "")
	for via, checks := range both() {
		assert.Equal(t, forge.CheckSuccess, checks["build"].State, via)
		assert.Equal(t, at(12), checks["build"].CompletedAt, via)
		assert.True(t, checks["build"].CompletedAt.After(first[via]["build"].CompletedAt), via)
		assert.Equal(t, at(13), checks["ci/external"].CompletedAt, via)
	}
}

func TestRandomFaultsNeverLookLikeCI(t *testing.T) {
	srv := githubtest.New(t, githubtest.WithSeed(7))
	c, _ := newClient(t, srv, func(o *Options) { o.Retry.MaxAttempts = 2 })
	id := srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	srv.CompleteCheckRun(id, "success")
	srv.FailRate(0.5, githubtest.Fault502)
	ok, failed := 0, 0
	for range 40 {
		checks, err := c.Checks(context.Background(), sha1)
		if err != nil {
			failed++
			assert.ErrorIs(t, err, ghapi.ErrServer)
			assert.Nil(t, checks)
			continue
		}
		ok++
		require.Len(t, checks, 1)
		assert.Equal(t, forge.CheckSuccess, checks[0].State)
	}
	assert.Positive(t, ok)
	assert.Positive(t, failed)
}
