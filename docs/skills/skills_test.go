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
	for class, name := range map[hooks.Class]string{hooks.ClassCIFailed: skills.CIFailure, hooks.ClassConflict: skills.MergeConflict,
		hooks.ClassNoNewCI: skills.CIStalled, hooks.ClassPollingTimeout: skills.CIStalled, hooks.ClassCICancelled: skills.CIStalled,
		hooks.ClassCIEnvironment: skills.CIStalled} {
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
	assert.Len(t, names, 8)
	for _, name := range names {
		data, err := skills.Read(name)
		require.NoError(t, err)
		assert.Greater(t, len(strings.Fields(string(data))), 20, name)
	}
}

// CI that did not start or did not finish is no failure of the code: the
// agent is told what happened and to push again, not to read a feedback
// file that does not exist and reproduce a failure that did not happen.
func TestAStalledCIIsNoFailureToFix(t *testing.T) {
	book := &notice.Book{Config: &stages.Config{}, SkillsDir: t.TempDir(), IssueDir: func(int) string { return "/repo/_agenttree/issues/007" },
		Vars: func(*issues.Issue) map[string]string { return map[string]string{"default_branch": "main"} }}
	for _, tt := range []struct {
		class  hooks.Class
		reason string
	}{
		{hooks.ClassNoNewCI, "no CI run started on abc within 30m0s of the push (no_new_ci)"},
		{hooks.ClassPollingTimeout, "CI on abc is still running after 10m0s from its start (polling_timeout)"},
		{hooks.ClassCICancelled, "CI on abc did not finish: test (cancelled) (ci_cancelled)"},
		{hooks.ClassCIEnvironment, "CI on abc failed for its environment, not the code (ci_environment), after it was run again: test: its machine ran out of disk"},
	} {
		t.Run(string(tt.class), func(t *testing.T) {
			iss := &issues.Issue{ID: 7, Outputs: map[string]string{notice.OutClass: string(tt.class)},
				History: []issues.HistoryEntry{{Kind: stages.MoveStepBack, From: "pr_ready", To: "implement.code", Reason: tt.reason}}}
			msgs := book.Entry(iss, 0)
			require.Len(t, msgs, 1)
			text := msgs[0].Text
			assert.Contains(t, text, tt.reason)
			assert.Contains(t, text, "did not start, or it started and did not finish")
			assert.Contains(t, text, "nothing in the code to fix")
			assert.Contains(t, text, "calls a person")
			assert.NotContains(t, strings.ToLower(text), "feedback file:")
			assert.NotContains(t, text, "Read the feedback file")
			assert.NotContains(t, text, "Reproduce")
			assert.NotContains(t, text, "Fix it and commit")
		})
	}
	// A CI failure still points at its feedback.
	iss := &issues.Issue{ID: 7, Outputs: map[string]string{notice.OutClass: string(hooks.ClassCIFailed), notice.OutFeedback: "ci_feedback.md"},
		History: []issues.HistoryEntry{{Kind: stages.MoveStepBack, From: "pr_ready", To: "implement.code", Reason: "CI failed on abc: test (failure)"}}}
	text := book.Entry(iss, 0)[0].Text
	assert.Contains(t, text, "See /repo/_agenttree/issues/007/ci_feedback.md.")
	assert.Contains(t, text, "Read the feedback file")
}
