package skills_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/docs/skills"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// The engine tells an agent what to do about a CI failure or a conflict
// from a repository's _agenttree/skills/, else from these files, with the
// issue's values in their placeholders.
func TestFailureInstructionsAreTheEngines(t *testing.T) {
	iss := &issues.Issue{ID: 7}
	vars := map[string]string{"issue_id": "7", "issue_dir": "/repo/_agenttree/issues/007", "default_branch": "trunk"}
	book := &notice.Book{SkillsDir: t.TempDir(), Vars: func(got *issues.Issue) map[string]string {
		assert.Same(t, iss, got)
		return vars
	}}
	for name, class := range map[string]hooks.Class{skills.CIFailure: hooks.ClassCIFailed, skills.MergeConflict: hooks.ClassConflict} {
		data, err := skills.Read(name)
		require.NoError(t, err)
		assert.Equal(t, stages.Render(strings.TrimSpace(string(data)), vars), book.Skill(class, iss), name)
	}
	assert.Contains(t, book.Skill(hooks.ClassConflict, iss), "git rebase origin/trunk")
}

// The files use only the placeholders the engine fills in instructions.
func TestPlaceholdersAreFilled(t *testing.T) {
	known := []string{"issue_dir", "default_branch"}
	for _, v := range hooks.IssueVars() {
		known = append(known, v.Name)
	}
	names, err := fs.Glob(skills.FS(), "*.md")
	require.NoError(t, err)
	for _, name := range names {
		data, err := skills.Read(name)
		require.NoError(t, err)
		stages.Expand(string(data), func(v string, _, _ int) string {
			assert.Contains(t, known, v, "%s uses {{%s}}", name, v)
			return ""
		})
	}
}

// Each file is instructions a person can read: a Markdown file that says
// something.
func TestEveryFileSaysSomething(t *testing.T) {
	names, err := fs.Glob(skills.FS(), "*.md")
	require.NoError(t, err)
	assert.Len(t, names, 7)
	for _, name := range names {
		data, err := skills.Read(name)
		require.NoError(t, err)
		assert.Greater(t, len(strings.Fields(string(data))), 20, name)
	}
}
