package controller

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/stages"
)

const gatedOnCI = `
project: shop
forge: github
stages:
  - name: implement
    pre_completion:
      - pr_ci_passed:
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
`

// Between ticks the controller's engine (the one the agents' socket
// answers `next` with, controller/api) reads the forge, not what the
// last tick fetched: a batch kept past its tick answered an agent's gate
// with the PR as it was then, however long ago (CI still running, a
// review not given yet). Found by the day under GitHub's faults, whose
// person approved through it.
func TestTheControllersEngineReadsNoBatchBetweenTicks(t *testing.T) {
	r := newGitHubRigWith(t, gatedOnCI)
	head := fmt.Sprintf("%040x", 9)
	pr := r.srv.AddPR(githubtest.PR{Title: "issue-001", Branch: "issue-001", HeadSHA: head})
	run := r.srv.AddCheckRun(head, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: "issue-001", Stage: "implement"})
	require.NoError(t, err)
	_, err = r.e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
		i.PRNumber, i.HeadSHA, i.Branch = pr, head, "issue-001"
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, r.tick(t).Due, "the PR is watched: its state is fetched")

	r.srv.CompleteCheckRun(run, "success")
	e, err := r.c.Engine()
	require.NoError(t, err)
	res, err := e.Next(context.Background(), iss.ID, engine.Actor{Kind: engine.ActorAgent, Role: stages.RoleDeveloper}, false)
	require.NoError(t, err)
	assert.Equal(t, "review", res.To, "CI passed on the head: %v", res.Reasons)
	assert.True(t, res.Outcome.Moved, "%v", res.Reasons)
}
