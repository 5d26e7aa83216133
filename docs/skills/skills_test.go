package skills_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/docs/skills"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/hooks"
)

// The engine tells an agent what to do about a CI failure or a conflict
// from a repository's _agenttree/skills/, else from these files.
func TestFailureInstructionsAreTheEngines(t *testing.T) {
	book := &notice.Book{SkillsDir: t.TempDir()}
	for name, class := range map[string]hooks.Class{skills.CIFailure: hooks.ClassCIFailed, skills.MergeConflict: hooks.ClassConflict} {
		data, err := skills.Read(name)
		require.NoError(t, err)
		assert.Equal(t, book.Skill(class), strings.TrimSpace(string(data)), name)
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
