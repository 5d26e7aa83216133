package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

// optionAWithMerge is the design notes' Option A pipeline on the local
// forge, its CI the pipelines' `test -f ok.txt`, polled every second, and
// its accepted stage merging the PR as the reference pipeline's does. Its
// human review declares no hooks.
func optionAWithMerge(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "stages", "load", "testdata", "designnotes", "option-a.yaml"))
	require.NoError(t, err)
	config := string(data)
	for _, edit := range [][2]string{
		{"ci: {command: make test}\n", "ci: {command: test -f ok.txt}\nci_polling: {poll_interval_s: 1, min_interval_s: 1, max_interval_s: 2}\n"},
		{"  - name: accepted\n    terminal: completion\n", "  - name: accepted\n    terminal: completion\n    post_start:\n      - merge_pr:\n"},
	} {
		require.Contains(t, config, edit[0])
		config = strings.Replace(config, edit[0], edit[1], 1)
	}
	return config
}

// toOptionAReview takes a new issue of Option A to implementation_review,
// CI passed on its head (the controller's pass run in a person's next),
// and returns it with that head.
func toOptionAReview(t *testing.T, w *workspace) (int, string) {
	t.Helper()
	id := w.create(t, "Add checkout page", "--stage", "implement.feedback")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	head := gittest.Commit(t, w.dir, "ok.txt", "ok\n", "make CI pass")
	res := w.run(t, agentEnv, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	res = w.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	iss := w.issue(t, id)
	require.Equal(t, "implementation_review", iss.Stage, describe(&iss))
	require.Equal(t, head, iss.Outputs[stages.CIPassedSHA])
	return id, head
}

// A human review that declares no hooks (Option A's) records a person's
// approval of the PR's head all the same: one approve merges, the dry run
// before it says so, and validate warns of no refused merge.
func TestOneApproveAtAReviewWithoutHooksMerges(t *testing.T) {
	w := newForgeRepo(t, optionAWithMerge(t))
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")

	res := w.run(t, humanEnv, "validate")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.NotContains(t, res.stderr, "merge_pr", "no warning of a merge the review's approval lets through")

	id, head := toOptionAReview(t, w)
	res = w.run(t, humanEnv, "approve", itoa(id), "--dry-run")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "would move implementation_review → accepted (approve)")
	assert.Contains(t, res.stdout, "approving records your approval of PR #1 at its head "+head[:12]+" (CI passed on it); then implementation_review → accepted, whose entry work runs: merge_pr")
	assert.Equal(t, "implementation_review", w.issue(t, id).Stage)

	res = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "one approval merges: stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "merged PR #1")
	assert.NotContains(t, res.stdout, "no person's approval")
	iss := w.issue(t, id)
	assert.Equal(t, "accepted", iss.Stage, describe(&iss))
	assert.Nil(t, iss.EntryPending, "nothing is left to do at accepted")
	assert.Equal(t, head, iss.Outputs[stages.ApprovedSHA], "the approval is of the head CI passed on")
	assert.Equal(t, 1, moves(&iss, stages.MoveApprove), "one approval")
	assert.Contains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "ok.txt")
}

// A person's next at a review without hooks is an approval too, and
// merges.
func TestNextAtAReviewWithoutHooksMerges(t *testing.T) {
	w := newForgeRepo(t, optionAWithMerge(t))
	id, head := toOptionAReview(t, w)
	res := w.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "implementation_review → accepted (approve)")
	assert.Contains(t, res.stdout, "merged PR #1")
	assert.Equal(t, head, w.issue(t, id).Outputs[stages.ApprovedSHA])
}

// At a stage whose merge was refused for want of an approval (a person
// moved the issue past the review), approve --dry-run says what approve
// does there: it records the approval and runs the merge again.
func TestApproveDryRunAtARefusedMergeSaysWhatApproveDoes(t *testing.T) {
	w := newForgeRepo(t, optionAWithMerge(t))
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	id, head := toOptionAReview(t, w)
	res := w.run(t, humanEnv, "move", itoa(id), "accepted", "--reason", "looks done")
	require.Equal(t, exitBlocked, res.code, "moved, but not merged: stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "no person's approval of it is on record")
	require.NotNil(t, w.issue(t, id).EntryPending, "the merge is left to do")

	res = w.run(t, humanEnv, "approve", itoa(id), "--dry-run")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "approving records your approval of PR #1 at its head "+head[:12]+" (CI passed on it); then the entry work of accepted runs again: merge_pr")
	assert.NotContains(t, res.stdout, "did not finish", "approve does not leave them for next")
	iss := w.issue(t, id)
	assert.Empty(t, iss.Outputs[stages.ApprovedSHA], "a dry run records nothing")
	assert.NotContains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "ok.txt")

	res = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "merged PR #1")
	assert.Equal(t, head, w.issue(t, id).Outputs[stages.ApprovedSHA])
	assert.Contains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "ok.txt")
}
