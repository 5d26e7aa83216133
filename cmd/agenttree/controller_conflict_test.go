package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// The conflict path: a commit lands on main that changes the lines the
// agent changed, the controller's auto-rebase cannot resolve it, and the
// agent is told which files conflict. It rebases in its own checkout,
// commits without pushing and runs `next`; the controller's push replaces
// the PR's head under a lease, and the pipeline completes.

// a.txt as gittest.NewRemote makes it, and what each side makes of its
// second line; the resolution keeps both.
const (
	agentLines    = "one\ntwo, as the agent has it\nthree\n"
	mainLines     = "one\ntwo, as main has it\nthree\n"
	resolvedLines = "one\ntwo, as main has it\ntwo, as the agent has it\nthree\n"
)

// TestControllerConflictPath runs the conflict path with a long-running
// controller: a conflict that is on main before CI runs, met by
// wait_for_ci (the PR does not merge, so its CI would not count) in the
// reference pipeline and by check_conflicts, whose auto-rebase fails,
// where it runs first; and a conflict found only when the approved PR is
// merged at accepted.
func TestControllerConflictPath(t *testing.T) {
	landBeforeCI := func(t *testing.T, r *rig, a *agentCheckout, id int) {
		r.landOnMain(t, "a.txt", mainLines)
		a.next(t, id)
	}
	tests := []struct {
		name     string
		pipeline string
		// conflict lands the conflicting commit on main somewhere along
		// implement.feedback → pr_ready → implementation_review → accepted,
		// and drives the issue until the controller meets it.
		conflict func(t *testing.T, r *rig, a *agentCheckout, id int)
		// from is the stage where the conflict is found.
		from string
	}{
		{"found before CI", "controller", landBeforeCI, "pr_ready"},
		{"found by check_conflicts", "controller-conflicts-first", landBeforeCI, "pr_ready"},
		{"found at merge", "controller", func(t *testing.T, r *rig, a *agentCheckout, id int) {
			a.next(t, id)
			r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
			r.landOnMain(t, "a.txt", mainLines)
			res := r.run(t, humanEnv, "approve", itoa(id))
			assert.NotEqual(t, exitOK, res.code, "the merge was refused: stdout %s stderr %s", res.stdout, res.stderr)
			assert.Contains(t, res.stdout, "conflicts with main in a.txt", "the person is told why")
			assert.NotContains(t, res.stdout, "merged PR")
		}, "accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.pipeline)
			ctl := r.startController(t)
			id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
			received := r.tmux.startAgent(t, agentSession(id))
			a := r.agentWorktree(t, id)
			first := a.commitWork(t)

			tt.conflict(t, r, a, id)
			iss := r.waitFor(t, id, "stepped back once", steppedBack(1))
			back := lastMove(t, iss, stages.MoveStepBack)
			assert.Equal(t, []string{tt.from, "implement.feedback", "controller"}, []string{back.From, back.To, back.Actor})
			assert.Contains(t, back.Reason, "conflicts with main in a.txt")
			assert.Equal(t, first, r.originHead(t, iss.Branch), "nothing rewrote the PR's head")

			msg := r.awaitStepBackSent(t, id)
			awaitReceived(t, received, typed(msg))
			pane := r.tmux.capture(t, agentSession(id))
			for _, want := range []string{outbox.Marker(msg), "a.txt", "git rebase origin/main", "run `agenttree next` when fixed"} {
				assert.Contains(t, pane, want, "the agent's pane names the conflicting file and what to do")
			}

			rebased := a.rebaseOntoMain(t)
			a.next(t, id)
			iss = r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
			assert.Equal(t, 1, moves(iss, stages.MoveStepBack), "history %+v", iss.History)
			// Not a fast-forward of first: only a push with a lease on
			// first could put it there.
			assert.Equal(t, rebased, r.originHead(t, iss.Branch), "the PR's head is the agent's rebased head")
			assert.Equal(t, rebased, iss.HeadSHA, "CI verified the rebased head")

			r.approve(t, id)
			stopController(t, ctl)
			assert.Equal(t, resolvedLines, gittest.Run(t, r.bare(), "show", "main:a.txt")+"\n", "main holds both changes")
			assert.Equal(t, 1, r.prs(t), "one PR")
			assert.Len(t, r.agentMessages(t, id), 1, "the agent was told once, of the conflict")
		})
	}
}

// agentCheckout is the agent's linked worktree of the main checkout, on
// its issue's branch: it runs git and agenttree there, as agents do, while
// the controller works in the main checkout, on main.
type agentCheckout struct{ dir string }

// agentWorktree adds issue id's branch, from main, in a linked worktree,
// and makes it the test's working directory: agenttree finds the main
// checkout's config and issues from there.
func (r *rig) agentWorktree(t *testing.T, id int) *agentCheckout {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "agent")
	gittest.Run(t, r.dir, "worktree", "add", "-q", "-b", r.issue(t, id).Branch, dir, "main")
	t.Chdir(dir)
	return &agentCheckout{dir: dir}
}

// commitWork commits the agent's work: a.txt's second line changed, the
// checkout page, and what the pipelines' CI (`test -f ok.txt`) wants. It
// returns the new head.
func (a *agentCheckout) commitWork(t *testing.T) string {
	t.Helper()
	gittest.Commit(t, a.dir, "a.txt", agentLines, "reword line two")
	gittest.Commit(t, a.dir, "checkout.txt", "checkout\n", "checkout page")
	return gittest.Commit(t, a.dir, "ok.txt", "ok\n", "make CI pass")
}

// next is the agent's `next` in its worktree, with no issue named: the
// branch checked out there says which. It moves issue id from
// implement.feedback to pr_ready, the controller's stage.
func (a *agentCheckout) next(t *testing.T, id int) {
	t.Helper()
	res := invoke(t, agentEnv, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, fmt.Sprintf("issue %d moved implement.feedback → pr_ready", id), "the branch names the issue")
}

// rebaseOntoMain is what the agent does when told of the conflict: it
// rebases its branch onto origin/main, resolves a.txt keeping both
// changes, and commits, without pushing. It returns the rebased head.
func (a *agentCheckout) rebaseOntoMain(t *testing.T) string {
	t.Helper()
	gittest.Run(t, a.dir, "fetch", "-q", "origin")
	out, err := (&gitx.Repo{Dir: a.dir, Env: gittest.Env()}).Run(context.Background(), "rebase", "origin/main")
	require.Error(t, err, "the rebase stops on the conflict: %s", out)
	require.NoError(t, os.WriteFile(filepath.Join(a.dir, "a.txt"), []byte(resolvedLines), 0o644))
	gittest.Run(t, a.dir, "add", "a.txt")
	gittest.Run(t, a.dir, "-c", "core.editor=true", "rebase", "--continue")
	return gittest.Run(t, a.dir, "rev-parse", "HEAD")
}

// landOnMain is someone else's commit on origin's main, made in a clone
// of their own, that writes content to file.
func (r *rig) landOnMain(t *testing.T, file, content string) {
	t.Helper()
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, r.dir, "clone", "-q", r.bare(), other)
	gittest.Commit(t, other, file, content, "someone else's change")
	gittest.Run(t, other, "push", "-q", "origin", "main")
}

// originHead is where branch is on origin, the PR's head on the local
// forge.
func (r *rig) originHead(t *testing.T, branch string) string {
	t.Helper()
	return gittest.Run(t, r.bare(), "rev-parse", "refs/heads/"+branch)
}

// A merge refused for a conflict that a rebase resolves (main took one of
// the branch's commits as its own): the controller rebases the PR's head,
// and the rebased head goes back through CI and review, with nothing for
// the agent to fix; the agent's branch, which the PR holds as changes,
// is not pushed over it.
func TestControllerRebasesAMergeConflictItCanResolve(t *testing.T) {
	r := newRig(t, "controller")
	ctl := r.startController(t)
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	received := r.tmux.startAgent(t, agentSession(id))
	a := r.agentWorktree(t, id)
	gittest.Commit(t, a.dir, "a.txt", mainLines, "line two as main will have it")
	first := a.commitWork(t)
	a.next(t, id)
	r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))

	r.landOnMain(t, "a.txt", mainLines) // the branch's first commit, made on main
	res := r.run(t, humanEnv, "approve", itoa(id))
	assert.NotEqual(t, exitOK, res.code, "the merge was refused: stdout %s stderr %s", res.stdout, res.stderr)

	iss := r.waitFor(t, id, "checked again and back at review", func(iss *issues.Issue) bool {
		return moves(iss, stages.MoveStepBack) == 1 && iss.Stage == "implementation_review"
	})
	back := lastMove(t, iss, stages.MoveStepBack)
	assert.Equal(t, []string{"accepted", "pr_ready", "controller"}, []string{back.From, back.To, back.Actor})
	assert.Contains(t, back.Reason, "merge_pr found a conflict in a.txt; agenttree rebased the branch onto its base")
	msg := r.awaitStepBackSent(t, id)
	awaitReceived(t, received, typed(msg))
	assert.Contains(t, r.tmux.capture(t, agentSession(id)), "Nothing to fix")

	rebased := r.originHead(t, iss.Branch)
	assert.NotEqual(t, first, rebased, "the PR's head is the rebased one")
	assert.Equal(t, rebased, iss.HeadSHA, "CI verified the rebased head")
	r.approve(t, id)
	stopController(t, ctl)
	assert.Equal(t, agentLines, gittest.Run(t, r.bare(), "show", "main:a.txt")+"\n", "main holds the agent's change on top of its own")
	assert.Equal(t, 1, r.prs(t), "one PR")
}
