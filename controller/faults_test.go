package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	ghforge "github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

const onGitHub = `
project: shop
forge: github
ci_polling: {poll_interval_s: 1, min_interval_s: 1, max_interval_s: 2, max_retries: 5}
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

// githubRig is a controller over issues whose PRs are on the fake GitHub,
// with a clock the test moves.
type githubRig struct {
	srv *githubtest.Server
	e   *engine.Engine
	c   *Controller
	now time.Time
}

func newGitHubRig(t *testing.T) *githubRig { t.Helper(); return newGitHubRigWith(t, onGitHub) }

// newGitHubRigWith is newGitHubRig with config as the pipeline.
func newGitHubRigWith(t *testing.T, config string) *githubRig {
	t.Helper()
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	r := &githubRig{srv: githubtest.New(t), now: time.Now()}
	client, err := ghforge.New(context.Background(), ghforge.Options{
		Repo: r.srv.Owner + "/" + r.srv.Name, Host: "github.com", Token: r.srv.Token, BaseURL: r.srv.URL,
		// GitHub's retries, without their waits.
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	require.NoError(t, err)
	r.e = engine.New(cfg, store, reg, nil)
	r.e.Forge = client
	r.c = &Controller{Load: func() (*engine.Engine, error) { return r.e, nil }, Now: func() time.Time { return r.now }}
	return r
}

// waitingOnCI puts an issue at pr_ready with an open PR whose CI runs.
func (r *githubRig) waitingOnCI(t *testing.T, n int) (issue int, head string, run int64) {
	t.Helper()
	head = fmt.Sprintf("%040x", n+1)
	branch := fmt.Sprintf("issue-%03d", n)
	pr := r.srv.AddPR(githubtest.PR{Title: branch, Branch: branch, HeadSHA: head})
	run = r.srv.AddCheckRun(head, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	// A failure on an older commit of the branch is no fact about its head.
	r.srv.AddCheckRun(fmt.Sprintf("%040x", 1000+n), githubtest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure"})
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: branch, Stage: "pr_ready"})
	require.NoError(t, err)
	_, err = r.e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
		i.PRNumber, i.HeadSHA, i.Branch = pr, head, branch
		return nil
	})
	require.NoError(t, err)
	return iss.ID, head, run
}

func (r *githubRig) tick(t *testing.T) Summary {
	t.Helper()
	r.now = r.now.Add(5 * time.Second)
	sum, err := r.c.Tick(context.Background())
	require.NoError(t, err)
	return sum
}

// One GitHub answer in five an error (500, 502, 429, secondary limit) and
// failed results on old commits: CI that passes on the heads moves every
// issue on, and nothing is ever stepped back.
func TestForgeErrorsAndStaleResultsNeverStepBack(t *testing.T) {
	r := newGitHubRig(t)
	const n = 12
	ids := make([]int, n)
	runs := make([]int64, n)
	for i := range n {
		ids[i], _, runs[i] = r.waitingOnCI(t, i)
	}
	for _, f := range []edge.Fault{edge.Fault500, edge.Fault502, edge.Fault429, edge.FaultSecondary} {
		r.srv.FailRate(0.05, f) // 1 - 0.95^4: about one answer in five
	}
	for range 30 {
		r.tick(t)
	}
	for _, run := range runs {
		r.srv.CompleteCheckRun(run, "success")
	}
	for i := 0; i < 40 && !allAt(t, r.e, ids, "review"); i++ {
		r.tick(t)
	}
	assert.Positive(t, r.srv.FaultsSent(), "faults were injected")
	for _, id := range ids {
		iss, err := r.e.Store.Get(id)
		require.NoError(t, err)
		assert.Equal(t, "review", iss.Stage, "issue %d", id)
		assert.Nil(t, iss.Escalated, "issue %d", id)
		for _, h := range iss.History {
			assert.NotEqual(t, stages.MoveStepBack, h.Kind, "issue %d was stepped back: %s", id, h.Reason)
		}
	}
}

func allAt(t *testing.T, e *engine.Engine, ids []int, stage string) bool {
	t.Helper()
	for _, id := range ids {
		iss, err := e.Store.Get(id)
		require.NoError(t, err)
		if iss.Stage != stage {
			return false
		}
	}
	return true
}

// The PRs of a tick are read in batches: the hooks spend no request of
// their own on PR state or checks.
func TestATickReadsPRsInBatches(t *testing.T) {
	r := newGitHubRig(t)
	for i := range 120 {
		r.waitingOnCI(t, i)
	}
	r.tick(t) // the first look: each head seen for the first time
	before := requests(r.srv)
	sum := r.tick(t)
	require.Equal(t, 120, sum.Due)
	assert.Equal(t, 3, requests(r.srv)-before, "120 PRs are 3 GraphQL requests of 50, nothing per issue: %v", r.srv.Counts())
}

func requests(srv *githubtest.Server) int {
	total := 0
	for _, c := range srv.Counts() {
		total += c.Requests
	}
	return total
}
