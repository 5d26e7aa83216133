package board_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gittest"
)

var diffstatRE = regexp.MustCompile(`<span class="diffstat" title="git diff --numstat ([^"]+)">([^<]+)</span>`)

// The issue's page shows its PR's diff stat beside the PR's link, counted
// with git in the repository between the PR's branch and its base (as
// origin has them, else the repository's own branches), and nothing when
// there is no PR or no refs to count between.
func TestIssuePageShowsThePRsDiffStat(t *testing.T) {
	gittest.Require(t)
	tests := []struct {
		name string
		// setup makes the issue's branch in the clone; pr says whether the
		// issue has a PR.
		setup    func(t *testing.T, clone, branch string)
		pr       bool
		wantRefs string
		wantStat string
		wantNone bool
	}{
		{name: "pushed: origin's branch against origin's main", pr: true, setup: func(t *testing.T, clone, branch string) {
			work(t, clone, branch)
			gittest.Run(t, clone, "push", "-q", "origin", branch)
			gittest.Run(t, clone, "branch", "-q", "-f", branch, "main") // the local branch differs: origin's counts
		}, wantRefs: "origin/main...origin/", wantStat: "2 files changed, +3 −1"},
		{name: "not pushed: the local branch", pr: true, setup: work, wantRefs: "origin/main...", wantStat: "2 files changed, +3 −1"},
		{name: "no PR", setup: work, wantNone: true},
		{name: "a PR whose branch is nowhere", pr: true, setup: func(*testing.T, string, string) {}, wantNone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, clone := gittest.NewRemote(t)
			r := newRig(t, engine.WithWorkDir(clone))
			iss := r.create(t, "Add login page", "implementation_review")
			tt.setup(t, clone, iss.Branch)
			if tt.pr {
				withPR(t, r, iss)
			}
			code, body := r.get(t, "/issues/1")
			require.Equal(t, http.StatusOK, code, body)
			m := diffstatRE.FindStringSubmatch(html.UnescapeString(body))
			if tt.wantNone {
				assert.Nil(t, m, "no diff stat: %s", body)
				return
			}
			require.NotNil(t, m, "a diff stat beside the PR's link: %s", body)
			assert.Contains(t, m[1], tt.wantRefs)
			assert.Equal(t, tt.wantStat, m[2])
			assert.Regexp(t, `href="https://forge.example/pr/7"[^>]*>#7</a> <span class="diffstat"`, body)
		})
	}
}

// A push to the PR's branch shows on the page once the board looks at
// the refs again; the same commits are counted once.
func TestDiffStatFollowsThePRsBranch(t *testing.T) {
	gittest.Require(t)
	_, clone := gittest.NewRemote(t)
	r := newRig(t, engine.WithWorkDir(clone))
	iss := r.create(t, "Add login page", "implementation_review")
	work(t, clone, iss.Branch)
	withPR(t, r, iss)
	_, body := r.get(t, "/issues/1")
	assert.Contains(t, html.UnescapeString(body), ">2 files changed, +3 −1<")

	gittest.Run(t, clone, "checkout", "-q", iss.Branch)
	gittest.Commit(t, clone, "c.txt", "x\ny\n", "more")
	require.Eventually(t, func() bool {
		_, body := r.get(t, "/issues/1")
		return assert.ObjectsAreEqual([]string{">3 files changed, +5 −1<"}, regexp.MustCompile(`>\d+ files? changed[^<]*<`).FindAllString(html.UnescapeString(body), -1))
	}, 20*time.Second, 100*time.Millisecond)
}

// work makes branch in clone with two files changed (3 lines added, 1
// deleted) and main moved on meanwhile, which the stat leaves out.
func work(t *testing.T, clone, branch string) {
	t.Helper()
	gittest.Run(t, clone, "checkout", "-q", "-b", branch)
	gittest.Commit(t, clone, "a.txt", "one\n2\nthree\nfour\n", "edit a")
	gittest.Commit(t, clone, "b.txt", "new\n", "add b")
	gittest.Run(t, clone, "checkout", "-q", "main")
	gittest.Commit(t, clone, "main.txt", "main moved on\n", "main")
	gittest.Run(t, clone, "push", "-q", "origin", "main")
}

// withPR records PR 7 on iss.
func withPR(t *testing.T, r *rig, iss *issues.Issue) {
	t.Helper()
	_, err := r.e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
		i.PRNumber, i.PRURL = 7, "https://forge.example/pr/7"
		return nil
	})
	require.NoError(t, err)
}
