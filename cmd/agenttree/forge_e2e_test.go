package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// newForgeRepo makes a bare origin and a clone holding the config, with
// the config committed on main, and sets a git identity for the processes
// git runs.
func newForgeRepo(t *testing.T, config string) *workspace {
	t.Helper()
	gittest.Require(t)
	gittest.Isolate(t)
	_, dir := gittest.NewRemote(t)
	gittest.Commit(t, dir, ".gitignore", "_agenttree/\n", "ignore the state")
	gittest.Commit(t, dir, ".agenttree.yaml", config, "pipeline")
	gittest.Run(t, dir, "push", "-q", "origin", "main")
	return &workspace{dir: dir, config: filepath.Join(dir, ".agenttree.yaml")}
}

func TestLocalForgeEndToEnd(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	id := w.create(t, "Add checkout page", "--stage", "implement")
	branch := w.issue(t, id).Branch
	gittest.Run(t, w.dir, "checkout", "-q", "-b", branch)
	gittest.Commit(t, w.dir, "checkout.txt", "checkout\n", "checkout page")

	// Entering pr pushes the branch and opens the PR.
	r := w.run(t, agentEnv, "next")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "opened PR #1")
	iss := w.issue(t, id)
	assert.Equal(t, "pr", iss.Stage)
	assert.Equal(t, 1, iss.PRNumber)
	assert.Equal(t, gittest.Run(t, w.dir, "rev-parse", "HEAD"), iss.HeadSHA)

	// CI fails: ok.txt is missing. pr wait says so and writes the feedback.
	r = w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "CI failed on")
	assert.Contains(t, r.stdout, filepath.Join(w.issueDir(id), "ci_feedback.md"), "pr wait says where to look")
	feedback, err := os.ReadFile(filepath.Join(w.issueDir(id), "ci_feedback.md"))
	require.NoError(t, err)
	assert.Contains(t, string(feedback), "**ci**: failure")
	assert.Contains(t, string(feedback), "test -f ok.txt", "the log tail is in the feedback")

	r = w.run(t, agentEnv, "next")
	require.Equal(t, 1, r.code, "the CI gate blocks: "+r.stdout)
	assert.Contains(t, r.stdout, "CI failed on")

	// A new commit on the head: the old failure does not count for it.
	gittest.Commit(t, w.dir, "ok.txt", "ok\n", "make CI pass")
	gittest.Run(t, w.dir, "push", "-q", "origin", branch)
	r = w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms", "--json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, `"passed": true`)

	r = w.run(t, agentEnv, "next")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Equal(t, "review", w.issue(t, id).Stage)

	// Only a person approves; on the local forge that approval is the review.
	r = w.run(t, agentEnv, "approve", itoa(id))
	require.Equal(t, 3, r.code)
	r = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Equal(t, "accepted", w.issue(t, id).Stage)
	assert.Contains(t, r.stdout, "merged PR #1")

	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	files := gittest.Run(t, bare, "ls-tree", "--name-only", "main")
	assert.Contains(t, files, "checkout.txt")
	assert.Contains(t, files, "ok.txt")
}

func TestPRWaitWithoutPR(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	id := w.create(t, "No PR yet", "--stage", "implement")
	r := w.run(t, humanEnv, "pr", "wait", itoa(id))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "no pull request yet")
}

func TestForgeMisconfigurationIsAClearFailure(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	gittest.Run(t, w.dir, "remote", "remove", "origin")
	id := w.create(t, "Orphan", "--stage", "implement")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	gittest.Commit(t, w.dir, "x.txt", "x\n", "x")
	gittest.Run(t, w.dir, "update-ref", "refs/remotes/origin/main", "HEAD~1")
	r := w.run(t, agentEnv, "next")
	// The move happens; the entry hook reports the missing remote plainly,
	// and the exit status says the work is not finished.
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "moved implement → pr")
	assert.Contains(t, r.stdout, "did not finish")
	assert.Contains(t, r.stdout, "forge: local needs")
	assert.Zero(t, w.issue(t, id).PRNumber)

	// Until the entry hook succeeds, `next` runs it again before the gate.
	r = w.run(t, agentEnv, "next")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "create_pr (post_start of pr)")

	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	gittest.Run(t, w.dir, "remote", "add", "origin", bare)
	r = w.run(t, agentEnv, "next")
	assert.Contains(t, r.stdout, "opened PR #1", r.stdout+r.stderr)
	require.Equal(t, 3, r.code, "now the CI gate decides, and CI still running is waiting: "+r.stdout)
	assert.Contains(t, r.stdout, "CI is still running")
	assert.Equal(t, 1, w.issue(t, id).PRNumber)
	require.Equal(t, 1, w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms").code)
	r = w.run(t, agentEnv, "next")
	require.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "CI failed on")
}

func TestGitHubForgeSetupErrorsNameTheFix(t *testing.T) {
	config := strings.Replace(testpipeline.Read(t, "local-forge"), "forge: local", "forge: github", 1)
	tests := []struct {
		name   string
		remote string
		want   string
	}{
		{"not a GitHub remote", "https://gitlab.com/shop/shop.git", "gitlab.com"},
		{"no token", "https://github.com/shop/shop.git", "gh auth login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newForgeRepo(t, config)
			for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST"} {
				t.Setenv(k, "")
			}
			t.Setenv("GH_CONFIG_DIR", t.TempDir())
			bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
			gittest.Run(t, w.dir, "remote", "set-url", "origin", tt.remote)
			id := w.create(t, "Checkout", "--stage", "implement")
			gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
			gittest.Commit(t, w.dir, "x.txt", "x\n", "x")
			gittest.Run(t, w.dir, "update-ref", "refs/remotes/origin/main", "HEAD~1")

			r := w.run(t, agentEnv, "next")
			require.Equal(t, 1, r.code, r.stdout+r.stderr)
			assert.Contains(t, r.stdout, tt.want)
			assert.Zero(t, w.issue(t, id).PRNumber)
			branches := gittest.Run(t, bare, "branch", "--list")
			assert.NotContains(t, branches, "issue-", "nothing was pushed")
		})
	}
}

// A commit pushed after CI passed is never merged unverified: approving it
// sends the issue back through CI, and the approval after merges it.
func TestUnverifiedHeadIsNotMerged(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	id := w.create(t, "Add search", "--stage", "implement")
	branch := w.issue(t, id).Branch
	gittest.Run(t, w.dir, "checkout", "-q", "-b", branch)
	gittest.Commit(t, w.dir, "ok.txt", "ok\n", "search")
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	r := w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	verified := gittest.Run(t, w.dir, "rev-parse", "HEAD")
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	assert.Equal(t, "review", w.issue(t, id).Stage)

	// A late push, after CI passed.
	gittest.Commit(t, w.dir, "late.txt", "late\n", "late change")
	gittest.Run(t, w.dir, "push", "-q", "origin", branch)

	// Approving it sends it back through CI: nothing is approved or merged.
	r = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, 1, r.code, "not approved: "+r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "review → pr: a new head "+gittest.Run(t, w.dir, "rev-parse", "--short=12", "HEAD")+" was pushed during review; CI runs on it again")
	assert.Contains(t, r.stdout, "(CI passed on "+verified[:12]+", the head reviewed)")
	assert.Equal(t, "pr", w.issue(t, id).Stage)
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	assert.NotContains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "late.txt", "nothing unverified reached main")
	assert.Equal(t, verified, w.issue(t, id).Outputs["ci_passed_sha"])

	// CI passes on the new head; back at the review, the approval merges it.
	r = w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	r = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "merged PR #1")
	assert.Contains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "late.txt")
}

// What a person approved is what merges: code pushed after the approval,
// even with CI green on it, waits for a new approval.
func TestUnapprovedCodeIsNotMerged(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	id := w.create(t, "Tweak a", "--stage", "implement")
	branch := w.issue(t, id).Branch
	gittest.Run(t, w.dir, "checkout", "-q", "-b", branch)
	gittest.Commit(t, w.dir, "ok.txt", "ok\n", "ci file")
	gittest.Commit(t, w.dir, "a.txt", "one (issue)\ntwo\nthree\n", "tweak a")
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	require.Equal(t, 0, w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms").code)
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)

	// Meanwhile main changes the same line: the approved merge conflicts.
	other := filepath.Join(filepath.Dir(w.dir), "other")
	gittest.Run(t, filepath.Dir(w.dir), "clone", "-q", bare, other)
	gittest.Commit(t, other, "a.txt", "one (main)\ntwo\nthree\n", "main tweaks a")
	gittest.Run(t, other, "push", "-q", "origin", "main")
	r := w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "cannot be merged")
	approved := w.issue(t, id).Outputs["approved_sha"]
	require.NotEmpty(t, approved)

	// The agent resolves it, slips in more, and CI passes on the result.
	gittest.Run(t, w.dir, "fetch", "-q", "origin")
	gittest.Run(t, w.dir, "reset", "-q", "--hard", "origin/main")
	gittest.Commit(t, w.dir, "ok.txt", "ok\n", "ci file")
	gittest.Commit(t, w.dir, "extra.sh", "echo unreviewed\n", "unreviewed extra")
	gittest.Run(t, w.dir, "push", "-q", "-f", "origin", branch)
	require.Equal(t, 0, w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms").code)

	r = w.run(t, agentEnv, "next")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "a person approved "+approved[:12]+", not it")
	assert.NotContains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "extra.sh")

	// A person looks at the new commits and approves again: now it merges.
	r = w.run(t, agentEnv, "approve", itoa(id))
	assert.Equal(t, 3, r.code, "agents cannot approve")
	r = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "merged PR #1")
	assert.Contains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "extra.sh")
	hist := w.issue(t, id).History
	assert.Equal(t, stages.MoveApprove, hist[len(hist)-1].Kind, "the second approval is on record")
}
