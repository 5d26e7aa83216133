package hooks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
)

// Conditions and messages see the same variables, built from one table:
// the issue's own variables, its vars and its hooks' outputs, in that
// order of precedence.
func TestIssueVariables(t *testing.T) {
	issue := &hooks.Issue{ID: 7, Title: "Add login", Stage: "implement.code", Flow: "default", Branch: "issue-7",
		PRNumber: 12, PRURL: "https://example.com/pull/12", HeadSHA: "abc", Labels: []string{"ui", "auth"},
		Vars:    map[string]any{"needs_ui_review": true, "coverage": "90", "stage": "a person's stage"},
		Outputs: map[string]string{"coverage": "85", "failed_checks": "lint", "issue_title": "an output's title"}}

	cond := issue.CondVars()
	msg := issue.MessageVars()
	for _, v := range hooks.IssueVars() {
		assert.Contains(t, cond, v.Name)
		assert.Contains(t, msg, v.Name)
	}
	assert.Equal(t, map[string]any{
		"issue_id": 7, "issue_title": "Add login", "stage": "implement.code", "flow": "default", "branch": "issue-7",
		"pr_number": 12, "pr_url": "https://example.com/pull/12", "head_sha": "abc", "labels": []string{"ui", "auth"},
		"needs_ui_review": true, "coverage": "90", "failed_checks": "lint",
	}, cond)
	assert.Equal(t, map[string]string{
		"issue_id": "7", "issue_title": "Add login", "stage": "implement.code", "flow": "default", "branch": "issue-7",
		"pr_number": "12", "pr_url": "https://example.com/pull/12", "head_sha": "abc", "labels": "ui, auth",
		"needs_ui_review": "true", "coverage": "90", "failed_checks": "lint",
	}, msg)

	// Before the PR is recorded on the issue, messages show the number the
	// hook that opened it reported; conditions compare numbers.
	noPR := &hooks.Issue{ID: 8, Outputs: map[string]string{"pr_number": "3"}}
	assert.Equal(t, "3", noPR.MessageVars()["pr_number"])
	assert.Equal(t, 0, noPR.CondVars()["pr_number"])
}

// The config loader learns which variables every issue provides from the
// registry, which reads them from the same table as conditions and
// messages.
func TestRegistryVariables(t *testing.T) {
	var want []string
	for _, v := range hooks.IssueVars() {
		want = append(want, v.Name)
	}
	assert.Equal(t, []string{"issue_id", "issue_title", "stage", "flow", "branch", "labels", "pr_number", "pr_url", "head_sha"}, want)
	assert.Equal(t, want, hooks.NewRegistry().Variables())
}

// What the host reads of an agent's documents stays inside the issue's
// directory, whatever symlinks the agent makes, and is bounded in size.
func TestReadFileStaysInTheIssueDirectory(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "review.md"), []byte("# Review\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "plan.md")))
	require.NoError(t, os.Symlink("review.md", filepath.Join(dir, "alias.md")))
	big, err := os.Create(filepath.Join(dir, "big.md"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(hooks.MaxDocumentBytes+1))
	require.NoError(t, big.Close())
	iss := &hooks.Issue{Dir: dir}

	data, err := iss.ReadFile("review.md")
	require.NoError(t, err)
	assert.Equal(t, "# Review\n", string(data))
	data, err = iss.ReadFile("alias.md")
	require.NoError(t, err, "a symlink inside the directory is fine")
	assert.Equal(t, "# Review\n", string(data))
	for name, want := range map[string]string{
		"plan.md":     "outside the issue directory",
		"../secret":   "outside the issue directory",
		"big.md":      "larger than 16 MiB",
		"missing.md":  "cannot read it",
		"/etc/passwd": "absolute paths",
	} {
		_, err := iss.ReadFile(name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), want, name)
	}
}
