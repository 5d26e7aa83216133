package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

// toReview takes a new issue of the reference pipeline to
// implementation_review with CI passed on its head, the controller's pass
// run in a person's `next`, and returns it with that head.
func (r *rig) toReview(t *testing.T) (int, string) {
	t.Helper()
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	head := gittest.Commit(t, r.dir, "ok.txt", "ok\n", "make CI pass")
	r.agentNext(t, id)
	res := r.runProcess(t, processEnv(), "next", "-i", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	iss := r.issue(t, id)
	require.Equal(t, "implementation_review", iss.Stage)
	require.Equal(t, head, iss.Outputs[stages.CIPassedSHA])
	return id, head
}

// pushDuringReview is the agent (or anyone) pushing a commit to the PR's
// branch while a person reviews it; it returns the new head.
func (r *rig) pushDuringReview(t *testing.T, id int) string {
	t.Helper()
	head := gittest.Commit(t, r.dir, "late.txt", "late\n", "a late change")
	gittest.Run(t, r.dir, "push", "-q", "origin", r.issue(t, id).Branch)
	return head
}

// A push to the PR while it waits for review, then approvals: the new head
// goes through CI again and a person approves it after; no sequence of
// pushes and approvals leaves the issue where approving only repeats a
// refusal.
func TestAPushDuringReviewGoesBackThroughCI(t *testing.T) {
	r := newRig(t, "controller")
	id, _ := r.toReview(t)
	head := r.pushDuringReview(t, id)
	short := head[:12]

	// A dry run says what approving would do, and does nothing.
	res := r.run(t, humanEnv, "approve", itoa(id), "--dry-run")
	require.Equal(t, exitBlocked, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "a new head "+short+" was pushed during review")
	assert.Contains(t, res.stdout, "would step back implementation_review → pr_ready")
	assert.Equal(t, "implementation_review", r.issue(t, id).Stage)

	res = r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitBlocked, res.code, "not approved: stdout %s stderr %s", res.stdout, res.stderr)
	for _, want := range []string{
		"a new head " + short + " was pushed during review; CI runs on it again, and a person approves the new head after",
		"implementation_review → pr_ready",
		"`agenttree approve " + itoa(id) + "`",
	} {
		assert.Contains(t, res.stdout, want)
	}
	iss := r.issue(t, id)
	assert.Equal(t, "pr_ready", iss.Stage, describe(&iss))
	back := lastMove(t, &iss, stages.MoveManual)
	assert.Equal(t, []string{"implementation_review", "pr_ready", "human"}, []string{back.From, back.To, back.Actor})
	assert.Contains(t, back.Reason, "a new head "+short+" was pushed during review")
	assert.NotContains(t, gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main"), "late.txt", "nothing CI did not pass reached main")

	// Approving again before CI ran says what to run instead; it never
	// repeats a refusal that cannot resolve.
	res = r.run(t, humanEnv, "approve", itoa(id))
	assert.NotEqual(t, exitOK, res.code)
	assert.Contains(t, res.stdout+res.stderr, "`agenttree next -i "+itoa(id)+"`")
	assert.Equal(t, "pr_ready", r.issue(t, id).Stage)

	// CI runs on the new head; the person approves it; it is merged.
	res = r.runProcess(t, processEnv(), "next", "-i", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	iss = r.issue(t, id)
	require.Equal(t, "implementation_review", iss.Stage, describe(&iss))
	assert.Equal(t, head, iss.Outputs[stages.CIPassedSHA])
	res = r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "merged PR #1")
	assert.Equal(t, "accepted", r.issue(t, id).Stage)
	assert.Contains(t, gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main"), "late.txt")
}

// The controller's watch of the PR notices a push during review by
// itself: the issue goes back through CI, the agent and the history say
// why, and it comes back to the review with CI passed on the new head.
func TestControllerSendsAPushDuringReviewBackThroughCI(t *testing.T) {
	r := newRig(t, "controller")
	id, _ := r.toReview(t)
	ctl := r.startController(t)
	head := r.pushDuringReview(t, id)

	iss := r.waitFor(t, id, "back at the review with CI passed on the new head", func(iss *issues.Issue) bool {
		return iss.Stage == "implementation_review" && iss.Outputs[stages.CIPassedSHA] == head
	})
	back := lastMove(t, iss, stages.MoveManual)
	assert.Equal(t, []string{"implementation_review", "pr_ready", "controller"}, []string{back.From, back.To, back.Actor})
	assert.Contains(t, back.Reason, "a new head "+head[:12]+" was pushed during review; CI runs on it again")
	told := false
	for _, m := range r.agentMessages(t, id) {
		told = told || strings.Contains(m.Text, "a new head "+head[:12]+" was pushed during review")
	}
	assert.True(t, told, "the agent is told why its issue went back: %+v", r.agentMessages(t, id))

	res := r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "merged PR #1")
	stopController(t, ctl)
	assert.Contains(t, gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main"), "late.txt")
}

// The strand the merge used to leave: a person moved the issue past the
// review after a push, the merge refused the head CI did not pass, and
// each approval there only approved it again. Approving there now sends
// it back through CI, and the merge follows the next approval.
func TestApprovingARefusedMergeOfANewHeadGoesBackThroughCI(t *testing.T) {
	r := newRig(t, "controller")
	id, _ := r.toReview(t)
	head := r.pushDuringReview(t, id)
	res := r.run(t, humanEnv, "move", itoa(id), "accepted", "--reason", "looks done")
	require.Equal(t, exitBlocked, res.code, "moved, but not merged: stdout %s stderr %s", res.stdout, res.stderr)
	require.NotNil(t, r.issue(t, id).EntryPending, "the merge is left to do")

	res = r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitBlocked, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "accepted → pr_ready: a new head "+head[:12]+" was pushed after the review at implementation_review; CI runs on it again")
	iss := r.issue(t, id)
	assert.Equal(t, "pr_ready", iss.Stage, describe(&iss))
	assert.NotContains(t, gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main"), "late.txt")

	res = r.runProcess(t, processEnv(), "next", "-i", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	require.Equal(t, "implementation_review", r.issue(t, id).Stage)
	res = r.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main"), "late.txt")
}

// approve --dry-run (and a person's next --dry-run, which is the same at a
// review) says what approving would do: the head it approves, where the
// issue goes and the work that runs there. It approves nothing.
func TestApproveDryRunSaysWhatApprovingWouldDo(t *testing.T) {
	r := newRig(t, "controller")
	id, head := r.toReview(t)
	for _, args := range [][]string{{"approve", itoa(id), "--dry-run"}, {"next", "-i", itoa(id), "--dry-run"}} {
		res := r.run(t, humanEnv, args...)
		require.Equal(t, exitOK, res.code, "%v: stdout %s stderr %s", args, res.stdout, res.stderr)
		assert.Contains(t, res.stdout, "would move implementation_review → accepted (approve)")
		assert.Contains(t, res.stdout, "approving records your approval of PR #1 at its head "+head[:12]+" (CI passed on it); then implementation_review → accepted, whose entry work runs: merge_pr")
		assert.NotContains(t, res.stdout, "not approved yet")
	}
	assert.Equal(t, "implementation_review", r.issue(t, id).Stage)
	assert.NotContains(t, r.prRecord(t, 1), "approvals:", "nothing was approved")

	// A person's next at a review is an approval, and merges.
	res := r.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "implementation_review → accepted (approve)")
	assert.Contains(t, res.stdout, "merged PR #1")
	assert.Contains(t, r.prRecord(t, 1), "sha: "+head, "the approval is of the head the dry run named")
}

// prRecord is the local forge's record of PR n.
func (r *rig) prRecord(t *testing.T, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.dir, "_agenttree", "host", "forge", "prs", strconv.Itoa(n)+".yaml"))
	require.NoError(t, err)
	return string(data)
}

// The help of next and approve says what a person's next does at a
// review, what a new head does to an approval, and what --dry-run says.
func TestNextAndApproveHelpSayWhatAReviewDoes(t *testing.T) {
	r := invoke(t, humanEnv, "next", "--help")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "At a\nhuman review, a person's next is an approval, the same as `agenttree approve ID`")
	r = invoke(t, humanEnv, "approve", "--help")
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, want := range []string{
		"A person's `agenttree next -i ID` at a review does the same.",
		"A head pushed to the PR during the review",
		"sends the issue back to the stage before\nthe review that runs CI",
		"--dry-run says what approving would do: which head it approves",
	} {
		assert.Contains(t, r.stdout, want)
	}
}
