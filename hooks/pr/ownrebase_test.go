package pr

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
)

// addToLastCommit puts file into dir's last commit: one commit of the
// agent's holds it beside its other change.
func addToLastCommit(t *testing.T, dir, file, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644))
	gittest.Run(t, dir, "add", file)
	gittest.Run(t, dir, "commit", "--quiet", "--amend", "--no-edit")
}

// The controller rebased the PR's branch (check_conflicts) and the agent
// has not pulled yet, when the stage's entry work runs create_pr again on
// the new head. The rebase dropped a change main already had (ok.txt) from
// the agent's one commit, so the rebased commit is no copy of it: create_pr must still know the PR's
// head for agenttree's own, push nothing and pass, not call it someone
// else's push.
func TestLocalCreatePRAfterItsOwnRebaseBeforeThePull(t *testing.T) {
	l := newLocalPR(t, "")
	before, o := rebasedByCheckConflicts(t, l)
	rebased := branchIn(t, l.bare, "issue-7")
	require.NotEqual(t, before, rebased)
	assert.Equal(t, map[string]string{"conflict_files": "", "head_sha": rebased, "rebased_from": before, "rebased_to": rebased}, o.Outputs)
	assert.Equal(t, before, revParse(t, l.work, "issue-7"), "the agent has not pulled")
	maps.Copy(l.issue.Outputs, o.Outputs) // as the engine records them
	l.issue.HeadSHA = rebased

	o = runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, "agenttree's own rebase is no foreign push: %s", o.Reason)
	assert.Equal(t, rebased, branchIn(t, l.bare, "issue-7"), "nothing was pushed over it")

	// Someone else's push after it is still someone else's.
	gittest.Run(t, l.other, "fetch", "--quiet", "origin")
	gittest.Run(t, l.other, "checkout", "--quiet", "-b", "theirs", "origin/issue-7")
	gittest.Commit(t, l.other, "h.txt", "theirs\n", "someone else's")
	gittest.Run(t, l.other, "push", "--quiet", "origin", "theirs:issue-7")
	o = runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind)
	assert.Contains(t, o.Reason, "never held")

	// The agent's own commit on top of its old branch, not pulled: its
	// work is not lost to a push, and it is told to pull.
	l2 := newLocalPR(t, "")
	addToLastCommit(t, l2.work, "ok.txt", "ok\n")
	l2.openPR(t)
	l2.pushToMain(t, "ok.txt", "ok\n")
	gittest.Run(t, l2.work, "checkout", "--quiet", "main")
	o = runHook(t, l2.env, l2.issue, "check_conflicts", map[string]any{"auto_rebase": true})
	require.Equal(t, hooks.KindPending, o.Kind, o.Reason)
	maps.Copy(l2.issue.Outputs, o.Outputs)
	gittest.Run(t, l2.work, "checkout", "--quiet", "issue-7")
	gittest.Commit(t, l2.work, "i.txt", "more\n", "issue 7: more, before pulling")
	o = runHook(t, l2.env, l2.issue, "create_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind)
	assert.Contains(t, o.Reason, "git pull --rebase")
	assert.Equal(t, l2.issue.Outputs["rebased_to"], branchIn(t, l2.bare, "issue-7"), "nothing pushed over the rebase")
}

// The controller rebased the PR's branch (check_conflicts) and pushed it,
// and was killed before the engine recorded the rebase (its outputs): the
// next pass finds a head the issue does not know and runs the entry again
// from create_pr, the agent not having pulled. A head that is the branch
// rebased onto main, nothing more, is agenttree's own: nothing is pushed
// and the PR goes on; one with anything else in it is someone else's push,
// and the agent is told to pull. Found by cmd/agenttree TestCrashStorm: the
// agent, stepped back for "someone else's push", went round until the
// circuit breaker stopped the issue.
func TestLocalCreatePRAfterItsOwnRebaseWhoseRecordACrashLost(t *testing.T) {
	tests := []struct {
		name string
		// after changes the world after the rebase, before create_pr.
		after func(t *testing.T, l *localPR)
		own   bool
	}{
		{name: "the rebase as it was pushed", after: func(*testing.T, *localPR) {}, own: true},
		{name: "main moved on since", own: true, after: func(t *testing.T, l *localPR) {
			l.pushToMain(t, "h.txt", "more of main\n")
			gittest.Run(t, l.work, "fetch", "--quiet", "origin")
		}},
		{name: "someone else's commit on the rebase", after: func(t *testing.T, l *localPR) {
			gittest.Run(t, l.other, "fetch", "--quiet", "origin")
			gittest.Run(t, l.other, "checkout", "--quiet", "-b", "theirs", "origin/issue-7")
			gittest.Commit(t, l.other, "h.txt", "theirs\n", "someone else's")
			gittest.Run(t, l.other, "push", "--quiet", "origin", "theirs:issue-7")
			gittest.Run(t, l.work, "fetch", "--quiet", "origin")
		}},
		{name: "someone else's change folded into the rebase", after: func(t *testing.T, l *localPR) {
			gittest.Run(t, l.other, "fetch", "--quiet", "origin")
			gittest.Run(t, l.other, "checkout", "--quiet", "-b", "theirs", "origin/issue-7")
			addToLastCommit(t, l.other, "h.txt", "theirs\n")
			gittest.Run(t, l.other, "push", "--quiet", "--force", "origin", "theirs:issue-7")
			gittest.Run(t, l.work, "fetch", "--quiet", "origin")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocalPR(t, "")
			before, _ := rebasedByCheckConflicts(t, l)
			require.NotEqual(t, before, branchIn(t, l.bare, "issue-7"))
			// The kill: o.Outputs are never recorded.
			tt.after(t, l)
			head := branchIn(t, l.bare, "issue-7")

			o := runHook(t, l.env, l.issue, "create_pr", nil)
			if tt.own {
				require.Equal(t, hooks.KindPass, o.Kind, "agenttree's own rebase is no foreign push: %s", o.Reason)
				assertRebaseToldAgain(t, o, before, head)
			} else {
				require.Equal(t, hooks.KindFail, o.Kind)
				assert.Contains(t, o.Reason, "never held")
			}
			assert.Equal(t, head, branchIn(t, l.bare, "issue-7"), "nothing was pushed over it")
			assert.Equal(t, before, revParse(t, l.work, "issue-7"), "the agent's branch is as it was")
		})
	}
}

// The whole pass was lost to the kill: create_pr opened the PR, CI
// passed and check_conflicts rebased the branch and pushed it, and the
// issue recorded none of it, its PR's number included. The next create_pr
// has no PR to lease on and pushes plainly, which the remote refuses: a
// remote branch that is the branch rebased onto main is agenttree's own
// rebase, nothing is pushed, and the PR is found; one with anything else
// in it is refused, as ever. Found by cmd/agenttree TestCrashStorm.
func TestLocalCreatePRAfterItsOwnRebaseWhenThePRsNumberWasLost(t *testing.T) {
	tests := []struct {
		name  string
		after func(t *testing.T, l *localPR)
		own   bool
	}{
		{name: "the rebase as it was pushed", after: func(*testing.T, *localPR) {}, own: true},
		{name: "someone else's commit on the rebase", after: func(t *testing.T, l *localPR) {
			gittest.Run(t, l.other, "fetch", "--quiet", "origin")
			gittest.Run(t, l.other, "checkout", "--quiet", "-b", "theirs", "origin/issue-7")
			gittest.Commit(t, l.other, "h.txt", "theirs\n", "someone else's")
			gittest.Run(t, l.other, "push", "--quiet", "origin", "theirs:issue-7")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocalPR(t, "")
			before, _ := rebasedByCheckConflicts(t, l)
			// The kill: the pass recorded nothing, the PR's number included.
			l.issue.PRNumber, l.issue.PRURL, l.issue.HeadSHA = 0, "", ""
			tt.after(t, l)
			head := branchIn(t, l.bare, "issue-7")

			o := runHook(t, l.env, l.issue, "create_pr", nil)
			if tt.own {
				require.Equal(t, hooks.KindPass, o.Kind, "agenttree's own rebase is no foreign push: %s", o.Reason)
				assert.Equal(t, "1", o.Outputs["pr_number"], "the PR the lost pass opened")
				assert.Equal(t, head, o.Outputs["head_sha"])
				assertRebaseToldAgain(t, o, before, head)
			} else {
				require.Equal(t, hooks.KindFail, o.Kind)
				assert.Contains(t, o.Reason, "git pull --rebase")
			}
			assert.Equal(t, head, branchIn(t, l.bare, "issue-7"), "nothing was pushed over it")
			assert.Equal(t, before, revParse(t, l.work, "issue-7"), "the agent's branch is as it was")
		})
	}
}

// rebasedByCheckConflicts opens the PR of l's branch, its one commit
// with ok.txt added, puts ok.txt and more on main, and lets
// check_conflicts rebase the branch onto main and push it: the rebase
// drops ok.txt from the agent's commit, so the rebased commit is no copy
// of it. It returns the PR's head before, and check_conflicts' outcome.
func rebasedByCheckConflicts(t *testing.T, l *localPR) (before string, o hooks.Outcome) {
	t.Helper()
	addToLastCommit(t, l.work, "ok.txt", "ok\n")
	l.openPR(t)
	before = l.issue.HeadSHA
	l.pushToMain(t, "ok.txt", "ok\n")
	l.pushToMain(t, "g.txt", "other work\n")
	gittest.Run(t, l.work, "checkout", "--quiet", "main")
	o = runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
	require.Equal(t, hooks.KindPending, o.Kind, "a rebased head waits for CI: %s", o.Reason)
	return before, o
}

// assertRebaseToldAgain checks that create_pr, finding agenttree's own
// rebase from from to to whose record a kill lost, records it and tells
// the agent to pull, as check_conflicts would have.
func assertRebaseToldAgain(t *testing.T, o hooks.Outcome, from, to string) {
	t.Helper()
	assert.Equal(t, from, o.Outputs["rebased_from"])
	assert.Equal(t, to, o.Outputs["rebased_to"])
	require.Len(t, o.Send, 1, "the agent is told of the rebase")
	assert.Contains(t, o.Send[0], "agenttree rebased your branch issue-7 onto main")
	assert.Contains(t, o.Send[0], "`git pull --rebase origin issue-7`")
}

// The controller's rebase, made away from any work tree, fails on the
// host for no fault of the branch: in TestCrashStorm, git's own race
// between two worktrees added to one repository at once ("failed to read
// .git/worktrees/wt6/commondir"); here, the temporary directory it is
// made in is not there. It is tried again at the next poll, never sent
// to the agent to fix.
func TestLocalRebaseThatFailsOnTheHostIsTriedAgain(t *testing.T) {
	l := newLocalPR(t, "")
	l.openPR(t)
	before := l.issue.HeadSHA
	l.pushToMain(t, "g.txt", "other work\n")
	gittest.Run(t, l.work, "checkout", "--quiet", "main")
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))

	o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
	require.Equal(t, hooks.KindPending, o.Kind, "tried again, not the agent's to fix: %s", o.Reason)
	assert.Contains(t, o.Reason, "rebasing issue-7 on the host failed (will retry)")
	assert.Equal(t, before, branchIn(t, l.bare, "issue-7"), "nothing pushed")

	require.NoError(t, os.MkdirAll(os.Getenv("TMPDIR"), 0o755))
	o = runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
	require.Equal(t, hooks.KindPending, o.Kind, o.Reason)
	assert.Contains(t, o.Reason, "rebased issue-7 onto main")
	assert.NotEqual(t, before, branchIn(t, l.bare, "issue-7"))
}
