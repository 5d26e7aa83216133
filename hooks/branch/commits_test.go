package branch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/internal/gittest"
)

// newClone makes a bare origin with one commit on main and a clone of it
// checked out on a new branch issue-7.
func newClone(t *testing.T) (work string) {
	t.Helper()
	_, work = gittest.NewRemote(t)
	gittest.Run(t, work, "checkout", "--quiet", "-b", "issue-7")
	return work
}

func TestHasCommits(t *testing.T) {
	t.Parallel()
	work := newClone(t)
	issue := &hooks.Issue{Dir: t.TempDir(), WorkDir: work, Branch: "issue-7", DefaultBranch: "main"}
	commit := func(msg string) func(t *testing.T) {
		return func(t *testing.T) { gittest.Run(t, work, "commit", "--quiet", "--allow-empty", "-m", msg) }
	}
	steps := []struct {
		name   string
		before func(t *testing.T)
		kind   hooks.Kind
		count  string
		reason string
	}{
		{name: "fresh branch", kind: hooks.KindFail, count: "0",
			reason: "no commits on issue-7 beyond origin/main, main; commit your work first, then run `agenttree next` again"},
		{name: "one commit", before: commit("work"), kind: hooks.KindPass, count: "1"},
		{name: "two commits", before: commit("more work"), kind: hooks.KindPass, count: "2"},
		{name: "pushing does not hide the work",
			before: func(t *testing.T) { gittest.Run(t, work, "push", "--quiet", "origin", "issue-7") },
			kind:   hooks.KindPass, count: "2"},
		{name: "stepped back: nothing new beyond the head CI looked at",
			before: func(t *testing.T) { issue.HeadSHA = gittest.Run(t, work, "rev-parse", "HEAD") },
			kind:   hooks.KindFail, count: "0", reason: "(the PR head CI last looked at), origin/main, main"},
		{name: "new work after the step back", before: commit("fix CI"), kind: hooks.KindPass, count: "1"},
		{name: "pushed too", before: func(t *testing.T) { gittest.Run(t, work, "push", "--quiet", "origin", "issue-7") },
			kind: hooks.KindPass, count: "1"},
		{name: "commits merged to main do not count",
			before: func(t *testing.T) {
				gittest.Run(t, work, "push", "--quiet", "origin", "issue-7:main")
				gittest.Run(t, work, "fetch", "--quiet", "origin")
			},
			kind: hooks.KindFail, count: "0"},
	}
	for _, s := range steps {
		// The steps build on each other, so they run in order.
		ok := t.Run(s.name, func(t *testing.T) {
			if s.before != nil {
				s.before(t)
			}
			o := hookstest.Call(t, registry(), "has_commits", issue, hooks.Params{}, nil)
			assert.Equal(t, s.kind, o.Kind, o.Reason)
			assert.Equal(t, s.count, o.Outputs["commit_count"])
			assert.Contains(t, o.Reason, s.reason)
		})
		require.True(t, ok)
	}
}

func TestHasCommitsWithoutOrigin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "--quiet", "--initial-branch=trunk")

	tests := []struct {
		name   string
		issue  *hooks.Issue
		setup  func(t *testing.T)
		kind   hooks.Kind
		reason string
	}{
		{name: "no work tree", issue: &hooks.Issue{}, kind: hooks.KindFail, reason: "the issue has no work tree"},
		{name: "not a repository", issue: &hooks.Issue{WorkDir: t.TempDir()}, kind: hooks.KindFail, reason: "is not a git repository"},
		{name: "no base to compare against", issue: &hooks.Issue{WorkDir: dir, DefaultBranch: "main"}, kind: hooks.KindFail,
			reason: "neither origin/main nor main exists in " + dir + ", so there is nothing to count HEAD's commits against"},
		{name: "unborn HEAD", issue: &hooks.Issue{WorkDir: dir, DefaultBranch: "trunk"}, kind: hooks.KindFail,
			reason: "neither origin/trunk nor trunk exists"},
		{name: "local default branch only", issue: &hooks.Issue{WorkDir: dir, DefaultBranch: "trunk", Branch: "feature"},
			setup: func(t *testing.T) {
				gittest.Run(t, dir, "commit", "--quiet", "--allow-empty", "-m", "init")
				gittest.Run(t, dir, "checkout", "--quiet", "-b", "feature")
				gittest.Run(t, dir, "commit", "--quiet", "--allow-empty", "-m", "work")
			},
			kind: hooks.KindPass},
		{name: "default branch defaults to main", issue: &hooks.Issue{WorkDir: dir},
			setup: func(t *testing.T) { gittest.Run(t, dir, "branch", "main", "trunk") }, kind: hooks.KindPass},
		{name: "on the default branch itself", issue: &hooks.Issue{WorkDir: dir, DefaultBranch: "trunk"},
			setup: func(t *testing.T) { gittest.Run(t, dir, "checkout", "--quiet", "trunk") }, kind: hooks.KindFail,
			reason: "no commits on HEAD beyond trunk"},
	}
	for _, tt := range tests {
		ok := t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup(t)
			}
			o := hookstest.Call(t, registry(), "has_commits", tt.issue, hooks.Params{}, nil)
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Contains(t, o.Reason, tt.reason)
		})
		require.True(t, ok)
	}
}

// TestHasCommitsCountsTheIssueBranch checks has_commits looks at the issue's
// branch whatever the work tree has checked out.
func TestHasCommitsCountsTheIssueBranch(t *testing.T) {
	tests := []struct {
		name   string
		branch string // the issue's branch; issue-7 when empty
		setup  func(t *testing.T, work string)
		kind   hooks.Kind
		count  string
		reason []string
	}{
		{name: "issue branch has work, main checked out",
			setup: func(t *testing.T, work string) {
				gittest.Run(t, work, "commit", "--quiet", "--allow-empty", "-m", "work")
				gittest.Run(t, work, "checkout", "--quiet", "main")
			},
			kind: hooks.KindPass, count: "1"},
		{name: "another branch with work checked out, issue branch empty",
			setup: func(t *testing.T, work string) {
				gittest.Run(t, work, "checkout", "--quiet", "-b", "unrelated")
				gittest.Run(t, work, "commit", "--quiet", "--allow-empty", "-m", "other work")
				gittest.Run(t, work, "commit", "--quiet", "--allow-empty", "-m", "more other work")
			},
			kind: hooks.KindFail, count: "0", reason: []string{"no commits on issue-7 beyond origin/main, main"}},
		{name: "issue branch checked out",
			setup: func(t *testing.T, work string) {
				gittest.Run(t, work, "commit", "--quiet", "--allow-empty", "-m", "work")
			},
			kind: hooks.KindPass, count: "1"},
		{name: "issue branch exists nowhere",
			setup: func(t *testing.T, work string) {
				gittest.Run(t, work, "checkout", "--quiet", "main")
				gittest.Run(t, work, "branch", "--quiet", "-D", "issue-7")
			},
			kind: hooks.KindFail, reason: []string{"branch issue-7 does not exist in ", "create it with `git switch -c issue-7`"}},
		{name: "issue branch checked out but unborn", branch: "issue-8",
			setup: func(t *testing.T, work string) {
				gittest.Run(t, work, "checkout", "--quiet", "--orphan", "issue-8")
			},
			kind: hooks.KindFail, reason: []string{"has no commits at all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			work := newClone(t)
			tt.setup(t, work)
			branch := tt.branch
			if branch == "" {
				branch = "issue-7"
			}
			issue := &hooks.Issue{Dir: t.TempDir(), WorkDir: work, Branch: branch, DefaultBranch: "main"}
			o := hookstest.Call(t, registry(), "has_commits", issue, hooks.Params{}, nil)
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Equal(t, tt.count, o.Outputs["commit_count"])
			for _, r := range tt.reason {
				assert.Contains(t, o.Reason, r)
			}
		})
	}
}

// registry holds the hooks of this package, as the tests call them.
func registry() *hooks.Registry { return hooks.NewRegistry(Defs()...) }
