package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pipeline for people without a controller: entering `pr` opens the PR
// (post_start runs for agent stages), `pr wait` waits for the local forge's
// CI, the review approves on the forge, and accepting merges.
const localForgePipeline = `
project: shop
forge: local
ci:
  command: test -f ok.txt
stages:
  - name: implement
    pre_completion:
      - has_commits:
  - name: pr
    post_start:
      - create_pr: {labels: [agenttree]}
    pre_completion:
      - pr_ci_passed:
      - pr_mergeable:
  - name: review
    human_review: true
    pre_completion:
      - pr_approved:
  - name: accepted
    terminal: completion
    post_start:
      - merge_pr: {method: squash}
`

// gitOut runs git in dir and returns its trimmed output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// newForgeRepo makes a bare origin and a clone holding the config, with
// one commit on main, and sets a git identity for the processes git runs.
func newForgeRepo(t *testing.T, config string) *workspace {
	t.Helper()
	requireGit(t)
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "agenttree test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "agenttree test", "GIT_COMMITTER_EMAIL": "test@example.com",
	} {
		t.Setenv(k, v)
	}
	root := t.TempDir()
	bare := filepath.Join(root, "origin.git")
	gitOut(t, root, "init", "--bare", "-b", "main", bare)
	dir := filepath.Join(root, "work")
	gitOut(t, root, "clone", "-q", bare, dir)
	gitOut(t, dir, "checkout", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".agenttree.yaml"), []byte(config), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("_agenttree/\n"), 0o644))
	gitOut(t, dir, "add", ".")
	gitOut(t, dir, "commit", "-q", "-m", "pipeline")
	gitOut(t, dir, "push", "-q", "origin", "main")
	return &workspace{dir: dir, config: filepath.Join(dir, ".agenttree.yaml")}
}

func TestLocalForgeEndToEnd(t *testing.T) {
	w := newForgeRepo(t, localForgePipeline)
	id := w.create(t, "Add checkout page", "--stage", "implement")
	branch := w.issue(t, id).Branch
	gitOut(t, w.dir, "checkout", "-q", "-b", branch)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "checkout.txt"), []byte("checkout\n"), 0o644))
	gitOut(t, w.dir, "add", "checkout.txt")
	gitOut(t, w.dir, "commit", "-q", "-m", "checkout page")

	// Entering pr pushes the branch and opens the PR.
	r := w.run(t, agentEnv, "next")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "opened PR #1")
	iss := w.issue(t, id)
	assert.Equal(t, "pr", iss.Stage)
	assert.Equal(t, 1, iss.PRNumber)
	assert.Equal(t, gitOut(t, w.dir, "rev-parse", "HEAD"), iss.HeadSHA)

	// CI fails: ok.txt is missing. pr wait says so and writes the feedback.
	r = w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "CI failed on")
	feedback, err := os.ReadFile(filepath.Join(w.issueDir(id), "ci_feedback.md"))
	require.NoError(t, err)
	assert.Contains(t, string(feedback), "**ci**: failure")
	assert.Contains(t, string(feedback), "test -f ok.txt", "the log tail is in the feedback")

	r = w.run(t, agentEnv, "next")
	require.Equal(t, 1, r.code, "the CI gate blocks: "+r.stdout)
	assert.Contains(t, r.stdout, "CI failed on")

	// A new commit on the head: the old failure does not count for it.
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "ok.txt"), []byte("ok\n"), 0o644))
	gitOut(t, w.dir, "add", "ok.txt")
	gitOut(t, w.dir, "commit", "-q", "-m", "make CI pass")
	gitOut(t, w.dir, "push", "-q", "origin", branch)
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
	files := gitOut(t, bare, "ls-tree", "--name-only", "main")
	assert.Contains(t, files, "checkout.txt")
	assert.Contains(t, files, "ok.txt")
}

func TestPRWaitWithoutPR(t *testing.T) {
	w := newForgeRepo(t, localForgePipeline)
	id := w.create(t, "No PR yet", "--stage", "implement")
	r := w.run(t, humanEnv, "pr", "wait", itoa(id))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "no pull request yet")
}

func TestForgeMisconfigurationIsAClearFailure(t *testing.T) {
	w := newForgeRepo(t, localForgePipeline)
	gitOut(t, w.dir, "remote", "remove", "origin")
	id := w.create(t, "Orphan", "--stage", "implement")
	gitOut(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "x.txt"), []byte("x\n"), 0o644))
	gitOut(t, w.dir, "add", "x.txt")
	gitOut(t, w.dir, "commit", "-q", "-m", "x")
	gitOut(t, w.dir, "update-ref", "refs/remotes/origin/main", "HEAD~1")
	r := w.run(t, agentEnv, "next")
	// The move happens; the entry hook reports the missing remote plainly.
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "forge: local needs")
	assert.Zero(t, w.issue(t, id).PRNumber)

	// Until the entry hook succeeds, `next` runs it again before the gate.
	r = w.run(t, agentEnv, "next")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "create_pr (post_start of pr)")

	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	gitOut(t, w.dir, "remote", "add", "origin", bare)
	r = w.run(t, agentEnv, "next")
	assert.Contains(t, r.stdout, "opened PR #1", r.stdout+r.stderr)
	require.Equal(t, 1, r.code, "now the CI gate decides: "+r.stdout)
	assert.Contains(t, r.stdout, "CI is still running")
	assert.Equal(t, 1, w.issue(t, id).PRNumber)
	require.Equal(t, 1, w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms").code)
	r = w.run(t, agentEnv, "next")
	require.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "CI failed on")
}

func TestGitHubForgeSetupErrorsNameTheFix(t *testing.T) {
	config := strings.Replace(localForgePipeline, "forge: local", "forge: github", 1)
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
			gitOut(t, w.dir, "remote", "set-url", "origin", tt.remote)
			id := w.create(t, "Checkout", "--stage", "implement")
			gitOut(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
			require.NoError(t, os.WriteFile(filepath.Join(w.dir, "x.txt"), []byte("x\n"), 0o644))
			gitOut(t, w.dir, "add", "x.txt")
			gitOut(t, w.dir, "commit", "-q", "-m", "x")
			gitOut(t, w.dir, "update-ref", "refs/remotes/origin/main", "HEAD~1")

			r := w.run(t, agentEnv, "next")
			require.Equal(t, 0, r.code, r.stdout+r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.Zero(t, w.issue(t, id).PRNumber)
			branches := gitOut(t, bare, "branch", "--list")
			assert.NotContains(t, branches, "issue-", "nothing was pushed")
		})
	}
}

// A commit pushed after CI passed is never merged unverified: the merge
// refuses, and goes through once CI has passed on the new head.
func TestUnverifiedHeadIsNotMerged(t *testing.T) {
	w := newForgeRepo(t, localForgePipeline)
	id := w.create(t, "Add search", "--stage", "implement")
	branch := w.issue(t, id).Branch
	gitOut(t, w.dir, "checkout", "-q", "-b", branch)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "ok.txt"), []byte("ok\n"), 0o644))
	gitOut(t, w.dir, "add", "ok.txt")
	gitOut(t, w.dir, "commit", "-q", "-m", "search")
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	r := w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	verified := gitOut(t, w.dir, "rev-parse", "HEAD")
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	assert.Equal(t, "review", w.issue(t, id).Stage)

	// A late push, after CI passed.
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "late.txt"), []byte("late\n"), 0o644))
	gitOut(t, w.dir, "add", "late.txt")
	gitOut(t, w.dir, "commit", "-q", "-m", "late change")
	gitOut(t, w.dir, "push", "-q", "origin", branch)

	r = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "not at the commit CI verified")
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	assert.NotContains(t, gitOut(t, bare, "ls-tree", "--name-only", "main"), "late.txt", "nothing unverified reached main")
	assert.Equal(t, verified, w.issue(t, id).Outputs["ci_passed_sha"])

	// CI passes on the new head; the next `next` finishes the merge.
	r = w.run(t, humanEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = w.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "merged PR #1")
	assert.Contains(t, gitOut(t, bare, "ls-tree", "--name-only", "main"), "late.txt")
}
