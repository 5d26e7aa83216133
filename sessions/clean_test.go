package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

// cleanCase is an issue with an agent session, what was done in its
// worktree, and what clean does with it.
type cleanCase struct {
	name string
	// work is what the agent left in its worktree wt, on branch.
	work     func(r *rig, wt, branch string)
	finished bool
	want     sessions.Outcome
	keptFor  sessions.KeptFor
	// why is in the reason it was kept; namesWorktree: so is the
	// worktree's path.
	why           []string
	namesWorktree bool
	// branchStays: the branch is checked out in the main checkout.
	branchStays bool
}

func cleanCases() []cleanCase {
	commit := func(r *rig, wt, name string) { gittest.Commit(r.t, wt, name, name+"\n", "work on "+name) }
	return []cleanCase{
		{name: "pushed", finished: true, want: sessions.Removed, work: func(r *rig, wt, branch string) {
			commit(r, wt, "pushed.txt")
			r.git(wt, "push", "-q", "origin", branch)
		}},
		{name: "merged into main on origin", finished: true, want: sessions.Removed, work: func(r *rig, wt, _ string) {
			commit(r, wt, "merged.txt")
			r.git(wt, "push", "-q", "origin", "HEAD:main")
		}},
		{name: "no work at all", finished: true, want: sessions.Removed, work: func(*rig, string, string) {}},
		{name: "worktree deleted by hand", finished: true, want: sessions.Removed, work: func(r *rig, wt, _ string) {
			require.NoError(r.t, os.RemoveAll(wt))
		}},
		{name: "uncommitted", finished: true, want: sessions.Kept, keptFor: sessions.Uncommitted, namesWorktree: true,
			why: []string{"uncommitted work in ", "wip.txt", "commit and push, or remove it yourself with `git worktree remove --force "},
			work: func(r *rig, wt, _ string) {
				require.NoError(r.t, os.WriteFile(filepath.Join(wt, "wip.txt"), []byte("wip"), 0o644))
			}},
		{name: "unpushed", finished: true, want: sessions.Kept, keptFor: sessions.Unpushed, namesWorktree: true,
			why: []string{"2 commits in ", "on none of origin's branches nor on main", "`git worktree remove --force "},
			work: func(r *rig, wt, _ string) {
				commit(r, wt, "one.txt")
				commit(r, wt, "two.txt")
			}},
		{name: "unpushed branch, worktree removed", finished: true, want: sessions.Kept, keptFor: sessions.Unpushed,
			why: []string{"1 commit of branch issue-", "`git push origin issue-", "`git branch -D issue-"},
			work: func(r *rig, wt, _ string) {
				commit(r, wt, "lone.txt")
				r.git(r.repo, "worktree", "remove", wt)
			}},
		{name: "not finished", want: sessions.Kept, keptFor: sessions.NotFinished, why: []string{"not finished: at stage work"},
			work: func(r *rig, wt, branch string) {
				commit(r, wt, "pushed.txt")
				r.git(wt, "push", "-q", "origin", branch)
			}},
		{name: "branch checked out in the main checkout", finished: true, want: sessions.Removed, branchStays: true,
			work: func(r *rig, wt, branch string) {
				commit(r, wt, "main-checkout.txt")
				r.git(wt, "push", "-q", "origin", branch)
				r.git(r.repo, "worktree", "remove", wt)
				r.git(r.repo, "switch", "-q", branch)
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
	r := newRig(t, "")
	ctx := context.Background()
	var all []cleanIssue
	for _, tc := range cleanCases() {
		iss := r.create(tc.name, "work")
		res, err := r.m.Start(ctx, iss.ID, sessions.Options{})
		require.NoError(t, err, tc.name)
		token := r.agentEnv(iss.ID)["TOKEN"]
		tc.work(r, res.Session.Worktree, res.Session.Branch)
		if tc.finished {
			_, err := r.e.Settle(ctx, iss.ID, stages.TerminalCompletion, "merged by hand")
			require.NoError(t, err, tc.name)
		}
		all = append(all, cleanIssue{cleanCase: tc, id: iss.ID, rec: res.Session, token: token})
	}
	store := tokens.Open(r.e.Store.Root())

	// A dry run says what would go, and nothing goes.
	dry, err := r.m.Clean(ctx, true)
	require.NoError(t, err)
	require.Len(t, dry, len(all))
	for i, is := range all {
		want := is.want
		if want == sessions.Removed {
			want = sessions.WouldRemove
		}
		assert.Equal(t, want, dry[i].Outcome, is.name)
		_, err := r.m.Record(is.id)
		assert.NoError(t, err, "%s: the record stays", is.name)
		r.requireSession(is.rec.Session, true)
	}

	cleaned, err := r.m.Clean(ctx, false)
	require.NoError(t, err)
	require.Len(t, cleaned, len(all))
	for i, is := range all {
		t.Run(is.name, func(t *testing.T) {
			c := cleaned[i]
			assert.Equal(t, is.id, c.Issue)
			assert.Equal(t, is.want, c.Outcome)
			assert.Equal(t, is.keptFor, c.KeptFor)
			assert.Equal(t, is.keptFor == sessions.Uncommitted || is.keptFor == sessions.Unpushed, c.Refused())
			for _, s := range is.why {
				assert.Contains(t, c.Why, s)
			}
			_, tokErr := store.Lookup(is.token)
			_, recErr := r.m.Record(is.id)
			branch := r.hasBranch(is.rec.Branch)
			if is.want == sessions.Removed {
				assert.NoDirExists(t, is.rec.Worktree)
				r.requireSession(is.rec.Session, false)
				assert.ErrorIs(t, tokErr, tokens.ErrUnknown, "the session's token is revoked")
				assert.ErrorIs(t, recErr, sessions.ErrNoSession)
				assert.Equal(t, is.branchStays, branch, "the local branch is deleted (its work is on origin) unless checked out")
				if is.branchStays {
					assert.Equal(t, "checked out in "+r.repo, c.BranchKept)
				}
				return
			}
			if is.namesWorktree {
				assert.Contains(t, c.Why, is.rec.Worktree)
			}
			if is.keptFor != sessions.Unpushed || is.namesWorktree {
				assert.Equal(t, is.rec.Worktree, c.Worktree)
				assert.DirExists(t, is.rec.Worktree)
			}
			r.requireSession(is.rec.Session, true)
			assert.NoError(t, tokErr)
			assert.NoError(t, recErr)
			assert.True(t, branch)
		})
	}
	assert.True(t, r.hasRemoteBranch(all[0].rec.Branch), "clean deletes no branch of origin's")
	assert.FileExists(t, filepath.Join(all[4].rec.Worktree, "wip.txt"))

	// Again: what was removed is not missed, what was kept is kept.
	again, err := r.m.Clean(ctx, false)
	require.NoError(t, err)
	var kept []sessions.KeptFor
	for _, c := range again {
		assert.Equal(t, sessions.Kept, c.Outcome, "issue %d", c.Issue)
		kept = append(kept, c.KeptFor)
	}
	assert.Equal(t, []sessions.KeptFor{sessions.Uncommitted, sessions.Unpushed, sessions.Unpushed, sessions.NotFinished}, kept)
}

func TestCleanWithNothingToClean(t *testing.T) {
	r := newRig(t, "")
	r.create("Never started", "work")
	got, err := r.m.Clean(context.Background(), false)
	require.NoError(t, err)
	assert.Empty(t, got, "an issue with no session and no worktree is not listed")
}

// requireSession checks that tmux session name is there, or is not.
func (r *rig) requireSession(name string, want bool) {
	r.t.Helper()
	live, err := r.tmux.HasSession(context.Background(), name)
	require.NoError(r.t, err)
	require.Equal(r.t, want, live, "tmux session %s", name)
}

func (r *rig) hasBranch(branch string) bool {
	r.t.Helper()
	return r.git(r.repo, "branch", "--list", branch) != ""
}

func (r *rig) hasRemoteBranch(branch string) bool {
	r.t.Helper()
	return r.git(r.origin, "branch", "--list", branch) != ""
}
