package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/stages"
)

const mergesOnGitHub = `
project: shop
forge: github
stages:
  - name: implement
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
    host: controller
    post_start:
      - merge_pr:
`

// An issue whose merge is done at a terminal controller stage has nothing
// left for the controller: no pass, and no poll of its merged PR, however
// long it stays. It was worked on again at every poll interval for good
// (found by the day under GitHub's faults, TestADayOfGitHubFaults): each
// finished issue a pass, and its PR in the batched query, every 5 minutes.
func TestAFinishedIssueIsNotWorkedOnAgain(t *testing.T) {
	r := newGitHubRigWith(t, mergesOnGitHub)
	head := fmt.Sprintf("%040x", 7)
	pr := r.srv.AddPR(githubtest.PR{Title: "issue-001", Branch: "issue-001", HeadSHA: head})
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: "issue-001", Stage: "accepted"})
	require.NoError(t, err)
	require.NotNil(t, iss.EntryPending, "the merge is the controller's to do")
	_, err = r.e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
		i.PRNumber, i.HeadSHA, i.Branch = pr, head, "issue-001"
		i.Outputs = map[string]string{stages.CIPassedSHA: head, stages.ApprovedSHA: head}
		return nil
	})
	require.NoError(t, err)

	sum := r.tick(t)
	require.Equal(t, 1, sum.Due)
	merged, _ := r.srv.PR(pr)
	require.Equal(t, "merged", merged.State)
	done, err := r.e.Store.Get(iss.ID)
	require.NoError(t, err)
	require.Nil(t, done.EntryPending, "merged: the entry work is done")

	before := requests(r.srv)
	for range 3 {
		r.now = r.now.Add(time.Hour)
		assert.Zero(t, r.tick(t).Due, "a finished issue is not worked on")
	}
	assert.Equal(t, before, requests(r.srv), "nor its merged PR polled: %v", r.srv.Counts())
}
