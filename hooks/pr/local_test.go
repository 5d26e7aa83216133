package pr

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// The PR hooks against the local forge and real git: a bare origin, the
// agent's clone (the issue's work tree, on the issue branch) and a second
// clone through which "someone else" pushes to main.

// localPR is the setup of one local-forge test.
type localPR struct {
	bare, work, other string
	forge             *local.Forge
	env               *hooks.Env
	issue             *hooks.Issue
}

const localFile = "one\ntwo\nthree\n"

// newLocalPR makes the repositories and the forge. The agent's clone is on
// branch issue-7 with one commit changing line two of f.txt, not yet
// pushed. ci is the local forge's CI command ("" for none).
func newLocalPR(t *testing.T, ci string) *localPR {
	t.Helper()
	// The hooks run git (rebases commit) with the process environment.
	gittest.Isolate(t)

	bare, work := gittest.NewRemote(t)
	root := filepath.Dir(bare)
	l := &localPR{bare: bare, work: work, other: filepath.Join(root, "other")}
	gittest.Commit(t, l.work, "f.txt", localFile, "add f.txt")
	gittest.Commit(t, l.work, "README", "readme\n", "readme")
	gittest.Run(t, l.work, "push", "--quiet", "origin", "main")
	gittest.Run(t, root, "clone", "--quiet", l.bare, l.other)

	gittest.Run(t, l.work, "checkout", "--quiet", "-b", "issue-7")
	gittest.Commit(t, l.work, "f.txt", "one\ntwo (issue 7)\nthree\n", "issue 7: change two")

	f, err := local.New(context.Background(), local.Options{
		StateDir: filepath.Join(root, "state"), RepoDir: l.work, CICommand: ci, DefaultBranch: "main"})
	require.NoError(t, err)
	l.forge = f
	l.env = &hooks.Env{Forge: f, Config: prConfig(), Now: newTestClock().Now,
		Git: func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} }}
	l.issue = &hooks.Issue{ID: 7, Title: "Add login", Stage: "pr_ready", Branch: "issue-7", Dir: filepath.Join(root, "issue"),
		WorkDir: l.work, DefaultBranch: "main", Watch: map[string]string{}, Outputs: map[string]string{}}
	return l
}

// openPR runs create_pr and records the PR on the issue, as the engine
// does with its outputs.
func (l *localPR) openPR(t *testing.T) {
	t.Helper()
	o := runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	l.issue.PRNumber = 1
	l.issue.PRURL = o.Outputs["pr_url"]
	l.issue.HeadSHA = o.Outputs["head_sha"]
}

// pushToMain commits on main in the second clone and pushes it.
func (l *localPR) pushToMain(t *testing.T, file, content string) string {
	t.Helper()
	gittest.Run(t, l.other, "pull", "--quiet", "--ff-only", "origin", "main")
	sha := gittest.Commit(t, l.other, file, content, "main: "+file)
	gittest.Run(t, l.other, "push", "--quiet", "origin", "main")
	return sha
}

func isClean(t *testing.T, dir string) bool {
	t.Helper()
	return gittest.Run(t, dir, "status", "--porcelain") == ""
}

func TestLocalCreatePRAndWaitForCI(t *testing.T) {
	l := newLocalPR(t, `echo "checking for ok.txt"; test -f ok.txt`)
	head := revParse(t, l.work, "HEAD")
	require.Empty(t, branchIn(t, l.bare, "issue-7"))

	o := runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, "opened PR #1: local:work#1", o.Message)
	assert.Equal(t, map[string]string{"pr_number": "1", "pr_url": "local:work#1", "head_sha": head}, o.Outputs)
	assert.Equal(t, head, branchIn(t, l.bare, "issue-7"), "create_pr pushed the branch")
	l.issue.PRNumber, l.issue.HeadSHA = 1, head

	o = runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, "PR #1 is open: local:work#1", o.Message, "the second call finds the same PR")
	rec, err := l.forge.Record(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "Add login", rec.Title)
	assert.Equal(t, "main", rec.Base)
	_, err = l.forge.Record(context.Background(), 2)
	assert.ErrorIs(t, err, forge.ErrNotFound)

	// CI runs on the head (in the background) and fails: ok.txt is missing.
	o = runHook(t, l.env, l.issue, "wait_for_ci", nil)
	require.Equal(t, hooks.KindPending, o.Kind, "CI runs in the background: %s", o.Reason)
	o = pollUntilDone(t, l, "wait_for_ci")
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassCIFailed, o.Class)
	assert.Equal(t, "ci", o.Outputs["failed_checks"])
	assert.Equal(t, head, o.Outputs["head_sha"])
	fb := o.Files["ci_feedback.md"]
	assert.Contains(t, fb, "- **ci**: failure — ")
	assert.Contains(t, fb, "commit "+head)
	assert.Contains(t, fb, "$ echo \"checking for ok.txt\"; test -f ok.txt")
	assert.Contains(t, fb, "checking for ok.txt\n")
	assert.Contains(t, fb, "agenttree: CI failed (exit status 1)")
	o = runHook(t, l.env, l.issue, "pr_ci_passed", nil)
	assert.Equal(t, hooks.KindFail, o.Kind, "the gate sees the same failure")

	// The agent fixes it and pushes: the new head gets its own CI run.
	fixed := gittest.Commit(t, l.work, "ok.txt", "ok\n", "add ok.txt")
	gittest.Run(t, l.work, "push", "--quiet", "origin", "issue-7")
	o = pollUntilDone(t, l, "wait_for_ci")
	require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, fixed, o.Outputs["head_sha"])
	assert.Equal(t, fixed, l.issue.Watch[watchHead])
	assert.Equal(t, hooks.KindPass, runHook(t, l.env, l.issue, "pr_ci_passed", nil).Kind)

	// The results stay bound to their commits.
	checks, err := l.forge.Checks(context.Background(), head)
	require.NoError(t, err)
	require.Len(t, checks, 1)
	assert.Equal(t, forge.CheckFailure, checks[0].State)
	assert.Equal(t, head, checks[0].SHA)
	checks, err = l.forge.Checks(context.Background(), fixed)
	require.NoError(t, err)
	require.Len(t, checks, 1)
	assert.Equal(t, forge.CheckSuccess, checks[0].State)
}

func TestLocalCheckConflictsAutoRebase(t *testing.T) {
	// The base moved on in another file: the branch is rebased onto it and
	// pushed, and the agent is told to pull.
	//
	// A branch behind its base is rebased even without a conflict, so
	// what CI tests is what the merge will produce.
	t.Run("base moved without a conflict", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		before := l.issue.HeadSHA
		mainHead := l.pushToMain(t, "g.txt", "other work\n")

		o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
		require.Equal(t, hooks.KindPending, o.Kind, "a rebased head waits for CI: %s", o.Reason)
		assert.Empty(t, o.Outputs["conflict_files"])
		newHead := revParse(t, l.work, "HEAD")
		assert.NotEqual(t, before, newHead, "the branch was rebased")
		assert.Equal(t, newHead, o.Outputs["head_sha"], "head_sha is the rebased head")
		assert.Equal(t, newHead, branchIn(t, l.bare, "issue-7"), "and it was pushed")
		assert.Equal(t, mainHead, revParse(t, l.work, "HEAD~1"), "on top of the new main")
		require.Len(t, o.Send, 1, "the agent is told its branch was rewritten")
		assert.Contains(t, o.Send[0], "rebased your branch issue-7 onto main")
		assert.True(t, isClean(t, l.work))

		// The issue's record still says before (a crash lost the
		// rebase's): the check reports the head it passed on.
		o = runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
		assert.Equal(t, hooks.KindPass, o.Kind, "up to date now: %s", o.Reason)
		assert.Equal(t, newHead, o.Outputs["head_sha"], "passed on the rebased head")
	})

	// The controller runs in the main checkout, on main: it rebases the
	// PR's head away from any work tree, and the agent's checkout (here:
	// the same clone, switched back to main) is left as it was.
	t.Run("from a checkout that is not on the branch", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		before := l.issue.HeadSHA
		mainHead := l.pushToMain(t, "g.txt", "other work\n")
		gittest.Run(t, l.work, "checkout", "--quiet", "main")

		o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
		require.Equal(t, hooks.KindPending, o.Kind, "a rebased head waits for CI: %s", o.Reason)
		pushed := branchIn(t, l.bare, "issue-7")
		assert.NotEqual(t, before, pushed, "the rebased head was pushed")
		assert.Equal(t, pushed, o.Outputs["head_sha"])
		assert.Equal(t, mainHead, revParse(t, l.bare, "issue-7~1"), "on top of the new main")
		assert.Equal(t, before, revParse(t, l.work, "issue-7"), "the local branch is the agent's to pull")
		assert.Equal(t, "main", gittest.Run(t, l.work, "branch", "--show-current"))
		require.Len(t, o.Send, 1)
	})

	// merge-tree sees a conflict that a rebase resolves: the branch's
	// change to f.txt was cherry-picked to main and changed again there,
	// so the rebase drops it and replays the rest.
	t.Run("conflict that a rebase resolves", func(t *testing.T) {
		l := newLocalPR(t, "")
		picked := revParse(t, l.work, "HEAD")
		gittest.Commit(t, l.work, "h.txt", "more work\n", "issue 7: more work")
		l.openPR(t)
		before := l.issue.HeadSHA
		gittest.Run(t, l.other, "fetch", "--quiet", "origin")
		// On another parent, so the pick is a commit of its own.
		gittest.Commit(t, l.other, "g.txt", "other work\n", "main: other work")
		gittest.Run(t, l.other, "cherry-pick", picked)
		require.NotEqual(t, picked, revParse(t, l.other, "HEAD"))
		gittest.Commit(t, l.other, "f.txt", "one\ntwo (issue 7, refined on main)\nthree\n", "main: refine two")
		gittest.Run(t, l.other, "push", "--quiet", "origin", "main")
		mainHead := revParse(t, l.other, "HEAD")

		o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
		require.Equal(t, hooks.KindPending, o.Kind, "a rebased head waits for CI: %s", o.Reason)
		newHead := revParse(t, l.work, "HEAD")
		assert.NotEqual(t, before, newHead)
		assert.Equal(t, mainHead, revParse(t, l.work, "HEAD~1"), "one commit left, on top of main")
		assert.Equal(t, map[string]string{"conflict_files": "", "head_sha": newHead, "rebased_from": before, "rebased_to": newHead}, o.Outputs)
		assert.Equal(t, newHead, branchIn(t, l.bare, "issue-7"), "pushed")
		assert.Equal(t, []string{"agenttree rebased your branch issue-7 onto main (now " + newHead[:12] + ") because it conflicted in f.txt; pull it before you change anything: `git pull --rebase origin issue-7`"}, o.Send)
		assert.True(t, isClean(t, l.work))
	})

	// A conflict the rebase cannot resolve is a failure of its own class,
	// whatever follows it: the step back, or the person called, is the
	// entry's on_conflict / on_failure, which the engine applies.
	t.Run("conflict", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		before := l.issue.HeadSHA
		l.pushToMain(t, "f.txt", "one\ntwo (changed on main)\nthree\n")

		o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassConflict, o.Class)
		assert.Empty(t, o.Target)
		assert.Empty(t, o.Message)
		assert.Equal(t, map[string]string{"conflict_files": "f.txt", "failure_reason": o.Reason}, o.Outputs)
		assert.Contains(t, o.Reason, "PR #1 conflicts with main in f.txt")
		assert.Contains(t, o.Reason, "resolve the conflicts")
		assert.Contains(t, o.Reason, "git fetch origin && git rebase origin/main")

		// The rebase was aborted: work tree and branches as they were.
		assert.True(t, isClean(t, l.work), "work tree left clean:\n%s", gittest.Run(t, l.work, "status"))
		assert.Equal(t, before, revParse(t, l.work, "HEAD"), "HEAD unchanged")
		assert.Equal(t, "issue-7", gittest.Run(t, l.work, "symbolic-ref", "--short", "HEAD"))
		assert.Equal(t, before, branchIn(t, l.bare, "issue-7"), "nothing pushed")
	})
}

func TestLocalCheckConflictsWithoutAutoRebase(t *testing.T) {
	l := newLocalPR(t, "")
	l.openPR(t)
	before := l.issue.HeadSHA

	o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": false})
	require.Equal(t, hooks.KindPass, o.Kind, "no conflict yet: %s", o.Reason)
	assert.Equal(t, "", o.Outputs["conflict_files"])

	l.pushToMain(t, "f.txt", "one\ntwo (changed on main)\nthree\n")
	o = runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": false})
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassConflict, o.Class)
	assert.Equal(t, "f.txt", o.Outputs["conflict_files"])
	assert.Empty(t, o.Message)
	assert.Equal(t, before, revParse(t, l.work, "HEAD"))
	assert.Equal(t, before, branchIn(t, l.bare, "issue-7"), "nothing pushed")
	assert.True(t, isClean(t, l.work))

	// The config's auto_rebase: false applies without the parameter.
	l.env.Config.Conflicts.AutoRebase = false
	o = runHook(t, l.env, l.issue, "check_conflicts", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, before, branchIn(t, l.bare, "issue-7"))

	// The forge agrees.
	o = runHook(t, l.env, l.issue, "pr_mergeable", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
	assert.Equal(t, hooks.ClassConflict, o.Class)
	assert.Equal(t, "f.txt", o.Outputs["conflict_files"])
	assert.Contains(t, o.Reason, "PR #1 conflicts with main in f.txt")
}

func TestLocalRebaseHook(t *testing.T) {
	t.Run("rebases and pushes with a lease", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		before := l.issue.HeadSHA
		mainHead := l.pushToMain(t, "g.txt", "other work\n")
		assert.Equal(t, hooks.KindPass, runHook(t, l.env, l.issue, "pr_mergeable", nil).Kind)

		o := runHook(t, l.env, l.issue, "rebase", nil)
		require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		newHead := revParse(t, l.work, "HEAD")
		assert.NotEqual(t, before, newHead)
		assert.Equal(t, mainHead, revParse(t, l.work, "HEAD~1"))
		assert.Equal(t, newHead, o.Outputs["head_sha"])
		assert.Equal(t, newHead, branchIn(t, l.bare, "issue-7"))
		assert.Equal(t, "rebased issue-7 onto main (now "+newHead[:12]+")", o.Message)
		assert.True(t, isClean(t, l.work))
	})

	// Someone else pushed a commit to the PR branch that the agent's clone
	// never had. Rebasing must not throw it away: the hook fails, says
	// what to run, and pushes nothing.
	t.Run("keeps commits pushed from elsewhere", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		before := l.issue.HeadSHA
		theirs := l.pushToBranch(t, "review.txt", "a reviewer's fix\n")
		l.pushToMain(t, "g.txt", "other work\n")

		o := runHook(t, l.env, l.issue, "rebase", nil)
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassGeneral, o.Class)
		assert.Contains(t, o.Reason, "someone else pushed to it")
		assert.Contains(t, o.Reason, "`git pull --rebase origin issue-7`")
		assert.Equal(t, theirs, branchIn(t, l.bare, "issue-7"), "their commit is still the branch's head")
		assert.Equal(t, before, revParse(t, l.work, "HEAD"), "nothing rebased")
	})

	t.Run("conflict", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		before := l.issue.HeadSHA
		l.pushToMain(t, "f.txt", "one\ntwo (changed on main)\nthree\n")
		o := runHook(t, l.env, l.issue, "rebase", nil)
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassConflict, o.Class)
		assert.Equal(t, "f.txt", o.Outputs["conflict_files"])
		assert.Equal(t, before, revParse(t, l.work, "HEAD"))
		assert.Equal(t, before, branchIn(t, l.bare, "issue-7"))
		assert.True(t, isClean(t, l.work))
	})
}

func TestLocalMergePR(t *testing.T) {
	t.Run("squash", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		head := l.issue.HeadSHA
		oldMain := branchIn(t, l.bare, "main")

		o := runHook(t, l.env, l.issue, "pr_approved", nil)
		require.Equal(t, hooks.KindFail, o.Kind)
		assert.Contains(t, o.Reason, "`agenttree approve 7`")
		require.NoError(t, l.forge.Approve(context.Background(), 1, "reviewer"))
		o = runHook(t, l.env, l.issue, "pr_approved", nil)
		require.Equal(t, hooks.KindPass, o.Kind)
		record(l.issue, o)
		record(l.issue, pollUntilDone(t, l, "wait_for_ci"))

		o = runHook(t, l.env, l.issue, "merge_pr", map[string]any{"method": "squash"})
		require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, "merged PR #1 into main (squash)", o.Message)

		newMain := branchIn(t, l.bare, "main")
		assert.NotEqual(t, oldMain, newMain, "main moved in the bare repository")
		assert.Equal(t, oldMain, revParse(t, l.bare, newMain+"^"), "one squashed commit on the old main")
		assert.Equal(t, "one\ntwo (issue 7)\nthree", gittest.Run(t, l.bare, "show", newMain+":f.txt"))
		assert.Equal(t, "Add login (#1)", gittest.Run(t, l.bare, "log", "-1", "--format=%s", newMain))
		assert.Empty(t, branchIn(t, l.bare, "issue-7"), "the branch is deleted")
		rec, err := l.forge.Record(context.Background(), 1)
		require.NoError(t, err)
		assert.Equal(t, forge.StateMerged, rec.State)
		assert.Equal(t, head, rec.HeadSHA)

		// Again: already merged, nothing changes.
		o = runHook(t, l.env, l.issue, "merge_pr", map[string]any{"method": "squash"})
		require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, newMain, branchIn(t, l.bare, "main"))
	})
	// A conflict found only at merge time (main moved after the gates
	// ran) carries what check_conflicts' would: the files and the reason.
	t.Run("conflict found at merge time", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		covered(l.issue)
		mainHead := l.pushToMain(t, "f.txt", "one\ntwo (changed on main)\nthree\n")

		o := runHook(t, l.env, l.issue, "merge_pr", map[string]any{"method": "squash"})
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassConflict, o.Class)
		assert.Equal(t, map[string]string{"conflict_files": "f.txt", "failure_reason": o.Reason}, o.Outputs)
		assert.Contains(t, o.Reason, "PR #1 cannot be merged: ")
		assert.Contains(t, o.Reason, "PR #1 conflicts with main in f.txt")
		assert.Contains(t, o.Reason, "git fetch origin && git rebase origin/main")
		assert.Equal(t, mainHead, branchIn(t, l.bare, "main"), "nothing merged")
		rec, err := l.forge.Record(context.Background(), 1)
		require.NoError(t, err)
		assert.Equal(t, forge.StateOpen, rec.State)
	})
	t.Run("head moved since CI verified it", func(t *testing.T) {
		l := newLocalPR(t, "")
		l.openPR(t)
		covered(l.issue)
		oldMain := branchIn(t, l.bare, "main")
		moved := gittest.Commit(t, l.work, "late.txt", "late\n", "a late change")
		gittest.Run(t, l.work, "push", "--quiet", "origin", "issue-7")

		o := runHook(t, l.env, l.issue, "merge_pr", map[string]any{"method": "squash"})
		require.Equal(t, hooks.KindFail, o.Kind, "reason: %s", o.Reason)
		assert.Equal(t, hooks.ClassUnverifiedHead, o.Class)
		assert.Contains(t, o.Reason, "PR #1 was not merged at its head "+gitx.ShortSHA(moved))
		assert.Equal(t, oldMain, branchIn(t, l.bare, "main"), "nothing merged")
	})
}

// pushToBranch commits on the PR's branch in the second clone, as a
// reviewer fixing something, and pushes it.
func (l *localPR) pushToBranch(t *testing.T, file, content string) string {
	t.Helper()
	gittest.Run(t, l.other, "fetch", "--quiet", "origin")
	gittest.Run(t, l.other, "checkout", "--quiet", "-B", "issue-7", "origin/issue-7")
	sha := gittest.Commit(t, l.other, file, content, "review: "+file)
	gittest.Run(t, l.other, "push", "--quiet", "origin", "issue-7")
	gittest.Run(t, l.other, "checkout", "--quiet", "main")
	return sha
}

// pollUntilDone calls a polling hook until it stops answering pending, as
// the engine would; a CI that never finishes fails the test instead of
// hanging it.
func pollUntilDone(t *testing.T, l *localPR, hook string) hooks.Outcome {
	t.Helper()
	var o hooks.Outcome
	require.Eventually(t, func() bool {
		o = runHook(t, l.env, l.issue, hook, nil)
		return o.Kind != hooks.KindPending
	}, 30*time.Second, 20*time.Millisecond, "%s still pending", hook)
	return o
}
