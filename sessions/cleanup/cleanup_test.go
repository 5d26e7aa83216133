package cleanup_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/cleanup"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// cleanCase is an issue with an agent session, what was done in its
// worktree, and what clean does with it.
type cleanCase struct {
	name string
	// work is what the agent left in its worktree wt, on branch.
	work     func(r *sessionstest.Rig, wt, branch string)
	finished bool
	want     cleanup.Outcome
	keptFor  cleanup.KeptFor
	// why is in the reason it was kept; namesWorktree: so is the
	// worktree's path.
	why           []string
	namesWorktree bool
	// branchStays: the branch is checked out in the main checkout.
	branchStays bool
}

func cleanCases() []cleanCase {
	commit := func(r *sessionstest.Rig, wt, name string) { gittest.Commit(r.T, wt, name, name+"\n", "work on "+name) }
	return []cleanCase{
		{name: "pushed", finished: true, want: cleanup.Removed, work: func(r *sessionstest.Rig, wt, branch string) {
			commit(r, wt, "pushed.txt")
			r.Git(wt, "push", "-q", "origin", branch)
		}},
		{name: "merged into main on origin", finished: true, want: cleanup.Removed, work: func(r *sessionstest.Rig, wt, _ string) {
			commit(r, wt, "merged.txt")
			r.Git(wt, "push", "-q", "origin", "HEAD:main")
		}},
		{name: "no work at all", finished: true, want: cleanup.Removed, work: func(*sessionstest.Rig, string, string) {}},
		{name: "worktree deleted by hand", finished: true, want: cleanup.Removed, work: func(r *sessionstest.Rig, wt, _ string) {
			require.NoError(r.T, os.RemoveAll(wt))
		}},
		{name: "uncommitted", finished: true, want: cleanup.Kept, keptFor: cleanup.Uncommitted, namesWorktree: true,
			why: []string{"uncommitted work in ", "wip.txt", "commit and push, or remove it yourself with `git worktree remove --force "},
			work: func(r *sessionstest.Rig, wt, _ string) {
				require.NoError(r.T, os.WriteFile(filepath.Join(wt, "wip.txt"), []byte("wip"), 0o644))
			}},
		{name: "unpushed", finished: true, want: cleanup.Kept, keptFor: cleanup.Unpushed, namesWorktree: true,
			why: []string{"2 commits in ", "on none of origin's branches nor on main", "`git worktree remove --force "},
			work: func(r *sessionstest.Rig, wt, _ string) {
				commit(r, wt, "one.txt")
				commit(r, wt, "two.txt")
			}},
		{name: "unpushed branch, worktree removed", finished: true, want: cleanup.Kept, keptFor: cleanup.Unpushed,
			why: []string{"1 commit of branch issue-", "`git push origin issue-", "`git branch -D issue-"},
			work: func(r *sessionstest.Rig, wt, _ string) {
				commit(r, wt, "lone.txt")
				r.Git(r.Repo, "worktree", "remove", wt)
			}},
		{name: "not finished", want: cleanup.Kept, keptFor: cleanup.NotFinished, why: []string{"not finished: at stage work"},
			work: func(r *sessionstest.Rig, wt, branch string) {
				commit(r, wt, "pushed.txt")
				r.Git(wt, "push", "-q", "origin", branch)
			}},
		{name: "branch checked out in the main checkout", finished: true, want: cleanup.Removed, branchStays: true,
			work: func(r *sessionstest.Rig, wt, branch string) {
				commit(r, wt, "main-checkout.txt")
				r.Git(wt, "push", "-q", "origin", branch)
				r.Git(r.Repo, "worktree", "remove", wt)
				r.Git(r.Repo, "switch", "-q", branch)
			}},
	}
}

// cleanIssue is a case's issue once its agent has worked.
type cleanIssue struct {
	cleanCase
	id    int
	rec   *sessions.Record
	token string
}

func TestCleanRemovesOnlyWhatFinishedIssuesLeaveSafely(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	ctx := context.Background()
	var all []cleanIssue
	for _, tc := range cleanCases() {
		iss := r.Create(tc.name, "work")
		res, err := r.M.Start(ctx, iss.ID, sessions.Options{})
		require.NoError(t, err, tc.name)
		token := r.AgentEnv(iss.ID)["TOKEN"]
		tc.work(r, res.Session.Worktree, res.Session.Branch)
		if tc.finished {
			_, err := r.E.Settle(ctx, iss.ID, stages.TerminalCompletion, "merged by hand")
			require.NoError(t, err, tc.name)
		}
		all = append(all, cleanIssue{cleanCase: tc, id: iss.ID, rec: res.Session, token: token})
	}
	store := tokens.Open(r.E.Store.Root())

	// A dry run says what would go, and nothing goes.
	dry, err := cleanup.Clean(ctx, r.M, true)
	require.NoError(t, err)
	require.Len(t, dry, len(all))
	for i, is := range all {
		want := is.want
		if want == cleanup.Removed {
			want = cleanup.WouldRemove
		}
		assert.Equal(t, want, dry[i].Outcome, is.name)
		_, err := r.M.Record(is.id)
		assert.NoError(t, err, "%s: the record stays", is.name)
		r.RequireSession(is.rec.Session, true)
	}

	cleaned, err := cleanup.Clean(ctx, r.M, false)
	require.NoError(t, err)
	require.Len(t, cleaned, len(all))
	for i, is := range all {
		t.Run(is.name, func(t *testing.T) {
			c := cleaned[i]
			assert.Equal(t, is.id, c.Issue)
			assert.Equal(t, is.want, c.Outcome)
			assert.Equal(t, is.keptFor, c.KeptFor)
			assert.Equal(t, is.keptFor == cleanup.Uncommitted || is.keptFor == cleanup.Unpushed, c.Refused())
			for _, s := range is.why {
				assert.Contains(t, c.Why, s)
			}
			_, tokErr := store.Lookup(is.token)
			_, recErr := r.M.Record(is.id)
			branch := r.HasBranch(is.rec.Branch)
			if is.want == cleanup.Removed {
				assert.NoDirExists(t, is.rec.Worktree)
				r.RequireSession(is.rec.Session, false)
				assert.ErrorIs(t, tokErr, tokens.ErrUnknown, "the session's token is revoked")
				assert.ErrorIs(t, recErr, sessions.ErrNoSession)
				assert.Equal(t, is.branchStays, branch, "the local branch is deleted (its work is on origin) unless checked out")
				if is.branchStays {
					assert.Equal(t, "checked out in "+r.Repo, c.BranchKept)
				}
				return
			}
			if is.namesWorktree {
				assert.Contains(t, c.Why, is.rec.Worktree)
			}
			if is.keptFor != cleanup.Unpushed || is.namesWorktree {
				assert.Equal(t, is.rec.Worktree, c.Worktree)
				assert.DirExists(t, is.rec.Worktree)
			}
			r.RequireSession(is.rec.Session, true)
			assert.NoError(t, tokErr)
			assert.NoError(t, recErr)
			assert.True(t, branch)
		})
	}
	assert.True(t, r.HasRemoteBranch(all[0].rec.Branch), "clean deletes no branch of origin's")
	assert.FileExists(t, filepath.Join(all[4].rec.Worktree, "wip.txt"))

	// Again: what was removed is not missed, what was kept is kept.
	again, err := cleanup.Clean(ctx, r.M, false)
	require.NoError(t, err)
	var kept []cleanup.KeptFor
	for _, c := range again {
		assert.Equal(t, cleanup.Kept, c.Outcome, "issue %d", c.Issue)
		kept = append(kept, c.KeptFor)
	}
	assert.Equal(t, []cleanup.KeptFor{cleanup.Uncommitted, cleanup.Unpushed, cleanup.Unpushed, cleanup.NotFinished}, kept)
}

func TestCleanWithNothingToClean(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	r.Create("Never started", "work")
	got, err := cleanup.Clean(context.Background(), r.M, false)
	require.NoError(t, err)
	assert.Empty(t, got, "an issue with no session and no worktree is not listed")
}
