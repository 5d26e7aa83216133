//go:build unix

package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

// TestOptionAReviewsOnlyAHeadCIPassedAfterItsOwnRebase: main moves on while
// Option A's pr_ready waits for CI; CI passes on the head, and
// check_conflicts rebases the branch onto main. The rebased head is new
// code: the issue reaches the person's review only once CI passed on it,
// and approving it is an approval, not a "new head pushed during review"
// (the controller pushed it, before the review).
func TestOptionAReviewsOnlyAHeadCIPassedAfterItsOwnRebase(t *testing.T) {
	t.Parallel()
	r := newScenarioRig(t, noteSnippets[0], recordingCI(""))
	require.Equal(t, "option-a.yaml", r.snippet.file)

	var first string
	id := r.handOn(t, true, func(branch string) {
		// CI is held on the agent's head until main has moved on.
		first = strings.TrimSpace(gittest.Run(t, r.dir, "rev-parse", branch))
		require.NoError(t, os.WriteFile(filepath.Join(r.hold, first), nil, 0o644))
		t.Cleanup(func() { _ = os.Remove(filepath.Join(r.hold, first)) })
	})
	require.Eventually(t, func() bool {
		_, err := r.ctl.Tick(context.Background())
		require.NoError(t, err)
		_, err = os.Stat(filepath.Join(r.pids, first))
		return err == nil
	}, settleWithin, tickEvery, "CI never started on %s", first)

	// Another issue merges meanwhile: a change that does not conflict.
	branch := r.issue(t, id).Branch
	gittest.Run(t, r.dir, "checkout", "-q", "main")
	gittest.Commit(t, r.dir, "other.txt", "another issue\n", "another issue merged")
	gittest.Run(t, r.dir, "push", "-q", "origin", "main")
	gittest.Run(t, r.dir, "checkout", "-q", branch)
	require.NoError(t, os.Remove(filepath.Join(r.hold, first)))

	// Each pass of the controller: the issue is at the review only with
	// CI passed on the PR's head, the rebased one.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := r.ctl.Tick(context.Background())
		require.NoError(c, err)
		iss := r.issue(t, id)
		if iss.Stage == "implementation_review" {
			assert.Equalf(t, iss.HeadSHA, iss.Outputs[stages.CIPassedSHA], "at the review without CI on its head: %s", describe(iss))
		}
		require.Equalf(c, "implementation_review", iss.Stage, "%s", describe(iss))
	}, settleWithin, tickEvery)

	iss := r.issue(t, id)
	rebased := strings.TrimSpace(gittest.Run(t, r.bare, "rev-parse", branch))
	assert.NotEqual(t, first, rebased, "check_conflicts rebased the branch onto main")
	assert.Equal(t, rebased, iss.HeadSHA)
	assert.Equal(t, rebased, iss.Outputs[stages.CIPassedSHA], "CI passed on the rebased head")
	assert.FileExists(t, filepath.Join(r.pids, rebased), "CI ran on the rebased head")
	assert.Zero(t, moves(iss, stages.MoveStepBack), describe(iss))
	assert.Empty(t, iss.Attempts)

	// The person approves the head CI passed on: the issue goes on.
	res := r.next(t, id, person)
	assert.Equal(t, "accepted", res.To, "%+v", res)
	for _, why := range res.Reasons {
		assert.NotContains(t, why, "pushed during review")
	}
	msgs, err := r.e.Outbox(id).Recent(0)
	require.NoError(t, err)
	for _, m := range msgs {
		assert.NotContains(t, m.Text, "pushed during review", "nobody is told of a push during review")
	}
	for _, h := range r.issue(t, id).History {
		assert.NotContains(t, h.Reason, "pushed during review")
	}
}
