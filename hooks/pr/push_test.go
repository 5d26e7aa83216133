package pr

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// create_pr pushes the issue's branch again once there is a PR: a branch
// the agent rewrote goes through on a lease, and commits anyone else
// pushed are never lost.
func TestLocalCreatePRPushesWithALease(t *testing.T) {
	const conflicting = "one\ntwo (changed on main)\nthree\n"
	tests := []struct {
		name string
		// change is what happens after the PR is open; it returns the
		// head the PR's branch must be at after create_pr.
		change func(t *testing.T, l *localPR) (want string)
		reason []string // "": the push goes through
	}{
		{
			name: "the agent added a commit",
			change: func(t *testing.T, l *localPR) string {
				return gittest.Commit(t, l.work, "g.txt", "more\n", "issue 7: more")
			},
		},
		{
			name: "the agent rebased onto main after a conflict",
			change: func(t *testing.T, l *localPR) string {
				l.pushToMain(t, "f.txt", conflicting)
				return rebaseResolving(t, l.work, "f.txt", "one\ntwo (changed on main, then issue 7)\nthree\n")
			},
		},
		{
			name: "someone else pushed to the branch",
			change: func(t *testing.T, l *localPR) string {
				theirs := l.pushToBranch(t, "review.txt", "a reviewer's fix\n")
				gittest.Commit(t, l.work, "g.txt", "more\n", "issue 7: more")
				return theirs
			},
			reason: []string{"PR #1's branch issue-7 is at ", "someone else pushed to it", "Nothing was pushed", "`git pull --rebase origin issue-7`"},
		},
		{
			name: "someone else pushed while the agent rebased",
			change: func(t *testing.T, l *localPR) string {
				theirs := l.pushToBranch(t, "review.txt", "a reviewer's fix\n")
				l.pushToMain(t, "f.txt", conflicting)
				rebaseResolving(t, l.work, "f.txt", "one\ntwo (changed on main, then issue 7)\nthree\n")
				return theirs
			},
			reason: []string{"someone else pushed to it", "`git pull --rebase origin issue-7`"},
		},
		{
			// The forge reports the head the agent rebased away from, but
			// the branch moved on since (GitHub a moment behind a push):
			// the lease is stale, and git refuses the push.
			name: "the branch moved after the forge reported it",
			change: func(t *testing.T, l *localPR) string {
				l.env.Forge = &staleHead{Forge: l.forge, head: l.issue.HeadSHA}
				l.pushToMain(t, "f.txt", conflicting)
				rebaseResolving(t, l.work, "f.txt", "one\ntwo (changed on main, then issue 7)\nthree\n")
				return l.pushToBranch(t, "review.txt", "a reviewer's fix\n")
			},
			reason: []string{"pushing issue-7 to origin was refused: the branch moved there since the forge reported it at ",
				"Nothing was overwritten", "`git pull --rebase origin issue-7`"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocalPR(t, "")
			l.openPR(t)
			want := tt.change(t, l)

			o := runHook(t, l.env, l.issue, "create_pr", nil)
			assert.Equal(t, want, branchIn(t, l.bare, "issue-7"))
			if tt.reason == nil {
				require.Equal(t, hooks.KindPass, o.Kind, "reason: %s", o.Reason)
				assert.Equal(t, "PR #1 is open: local:work#1", o.Message)
				assert.Equal(t, want, o.Outputs["head_sha"])
				return
			}
			require.Equal(t, hooks.KindFail, o.Kind)
			assert.Equal(t, hooks.ClassGeneral, o.Class, "the agent can fix it")
			assert.True(t, o.AgentFixable())
			for _, s := range tt.reason {
				assert.Contains(t, o.Reason, s)
			}
		})
	}
}

// Without a PR the push is a plain one: a branch that diverged from the
// remote is refused, never forced.
func TestLocalCreatePRWithoutAPRNeverForces(t *testing.T) {
	l := newLocalPR(t, "")
	gittest.Run(t, l.work, "push", "--quiet", "origin", "issue-7")
	pushed := revParse(t, l.work, "HEAD")
	gittest.Run(t, l.work, "commit", "--quiet", "--amend", "-m", "issue 7: reworded")

	o := runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind)
	assert.Contains(t, o.Reason, "push issue-7 to origin: push rejected: the remote has commits you do not have")
	assert.Equal(t, pushed, branchIn(t, l.bare, "issue-7"))
	_, err := l.forge.Record(context.Background(), 1)
	assert.ErrorIs(t, err, forge.ErrNotFound, "no PR opened")
}

// staleHead is a forge that reports an earlier head of the PR's branch
// than the remote has, as GitHub can for a moment after a push.
type staleHead struct {
	*local.Forge
	head string
}

func (f *staleHead) PR(ctx context.Context, n int) (*forge.PR, error) {
	pr, err := f.Forge.PR(ctx, n)
	if err == nil {
		pr.HeadSHA = f.head
	}
	return pr, err
}

// rebaseResolving rebases the work tree's branch onto origin/main as an
// agent does after a conflict in file: the rebase stops, the agent writes
// resolved into file and continues. It returns the rebased head.
func rebaseResolving(t *testing.T, dir, file, resolved string) string {
	t.Helper()
	gittest.Run(t, dir, "fetch", "--quiet", "origin")
	_, err := (&gitx.Repo{Dir: dir, Env: gittest.Env()}).Run(context.Background(), "rebase", "origin/main")
	require.Error(t, err, "the rebase stops at the conflict")
	require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(resolved), 0o644))
	gittest.Run(t, dir, "add", file)
	gittest.Run(t, dir, "-c", "core.editor=true", "rebase", "--continue")
	return revParse(t, dir, "HEAD")
}

// A branch that is not here is said once, with what to run: the push's
// own error already names the branch and the remote.
func TestLocalCreatePRSaysAMissingBranchOnce(t *testing.T) {
	l := newLocalPR(t, "")
	gittest.Run(t, l.work, "checkout", "--quiet", "main")
	gittest.Run(t, l.work, "branch", "--quiet", "-D", "issue-7")

	o := runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind)
	assert.Equal(t, 1, strings.Count(o.Reason, "issue-7 to origin"), o.Reason)
	assert.Contains(t, o.Reason, "create it with `git switch -c issue-7`")
}
