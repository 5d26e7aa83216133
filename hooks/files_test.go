package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const review = `# Review

## Summary
The change adds a login form and its handler, with tests.

## Critical Issues
<!-- List blocking problems as "- item". Leave the section empty if there are none.
- [ ] example item hidden in the template comment
-->
None.

### Deferred
- rename the handler later

## Checklist
- [x] Tests pass
- [x] Docs updated
- [ ] tests for the CLI

## Scores
` + "```yaml\nscores:\n  overall: 8\n  style: \"6\"\n  note: good\nreviews:\n  - score: 3\n```\n"

func TestFileExists(t *testing.T) {
	runCases(t, "file_exists", []hookCase{
		{name: "present", files: map[string]string{"review.md": "x"}, params: Params{"file": "review.md"}, kind: KindPass},
		{name: "nested", files: map[string]string{"docs/plan.md": "x"}, params: Params{"file": "docs/plan.md"}, kind: KindPass},
		{name: "dot segments inside", files: map[string]string{"plan.md": "x"}, params: Params{"file": "docs/../plan.md"}, kind: KindPass},
		{name: "missing", params: Params{"file": "review.md"}, kind: KindFail,
			reason: []string{"review.md: not found in the issue directory", "write it, then run `agenttree next` again"}},
		{name: "directory", files: map[string]string{"review.md/x": "x"}, params: Params{"file": "review.md"}, kind: KindFail,
			reason: []string{"review.md: is a directory, not a file"}},
		{name: "no file param", params: Params{}, kind: KindFail, reason: []string{"needs parameter `file`"}},
	})
}

// TestFileParamsStayInIssueDir checks every hook that reads a file refuses
// paths leading outside the issue directory.
func TestFileParamsStayInIssueDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "issue")
	writeFiles(t, root, map[string]string{"secret.md": "## S\n- item\n", "issue/inside.md": "## S\n- item\n"})
	require.NoError(t, os.Symlink(filepath.Join(root, "secret.md"), filepath.Join(dir, "out.md")))
	require.NoError(t, os.Symlink(root, filepath.Join(dir, "up")))
	require.NoError(t, os.Symlink("inside.md", filepath.Join(dir, "in.md")))

	paths := []struct {
		file   string
		reason string // "" when allowed
	}{
		{"../secret.md", "the path leads outside the issue directory"},
		{"docs/../../secret.md", "the path leads outside the issue directory"},
		{"/etc/passwd", "absolute paths are not allowed"},
		{filepath.Join(root, "secret.md"), "absolute paths are not allowed"},
		{"out.md", "a symlink leads outside the issue directory"},
		{"up/secret.md", "a symlink leads outside the issue directory"},
		{"in.md", ""},
	}
	hooks := map[string]Params{
		"file_exists":      {},
		"section_check":    {"section": "S"},
		"has_list_items":   {},
		"checkbox_checked": {"item": "item"},
		"field_check":      {"field": "x"},
		"min_words":        {"min": 1},
		"contains":         {"text": "item"},
	}
	for hook, base := range hooks {
		for _, p := range paths {
			t.Run(hook+"/"+p.file, func(t *testing.T) {
				params := Params{"file": p.file, "on_fail": "implement.code"}
				for k, v := range base {
					params[k] = v
				}
				o := callHook(t, context.Background(), hook, &Issue{Dir: dir}, params)
				if p.reason == "" {
					assert.NotContains(t, o.Reason, "outside")
					return
				}
				// Path problems block even with on_fail: they are config errors.
				assert.Equal(t, KindFail, o.Kind)
				assert.Contains(t, o.Reason, p.file+": "+p.reason)
			})
		}
	}
}

func TestSectionCheck(t *testing.T) {
	files := map[string]string{"review.md": review}
	runCases(t, "section_check", []hookCase{
		{name: "empty: comment hides the template item", files: files,
			params: Params{"file": "review.md", "section": "Critical Issues", "expect": "empty"}, kind: KindPass},
		{name: "empty: ### subsection is not part of the section", files: files,
			params: Params{"file": "review.md", "section": "critical issues", "expect": "empty"}, kind: KindPass},
		{name: "empty: items left", files: files,
			params: Params{"file": "review.md", "section": "Deferred", "expect": "empty"}, kind: KindFail,
			reason: []string{`review.md: section "Deferred" still has 1 list item ("rename the handler later"); resolve it and remove it from the section`, "then run `agenttree next` again"}},
		{name: "empty: many items are summarized",
			files:  map[string]string{"r.md": "## Critical Issues\n- a\n- [x] b\n1. c\n* d\n"},
			params: Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, kind: KindFail,
			reason: []string{`still has 4 list items ("a", "b", "c", and 1 more); resolve them and remove them`}},
		{name: "empty: blank items do not count",
			files:  map[string]string{"r.md": "## Critical Issues\n- \n1.\nN/A\n"},
			params: Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, kind: KindPass},
		{name: "empty: on_fail redirects", files: files,
			params: Params{"file": "review.md", "section": "Deferred", "expect": "empty", "on_fail": "implement.code"},
			kind:   KindRedirect, target: "implement.code", reason: []string{`section "Deferred" still has 1 list item`}},
		{name: "not_empty is the default", files: files,
			params: Params{"file": "review.md", "section": "Summary"}, kind: KindPass},
		{name: "not_empty: only a comment",
			files:  map[string]string{"r.md": "## Summary\n<!-- write a summary -->\n\n## Next\ntext\n"},
			params: Params{"file": "r.md", "section": "Summary", "expect": "not_empty"}, kind: KindFail,
			reason: []string{`r.md: section "Summary" is empty; write it, then run`}},
		{name: "not_empty: on_fail redirects",
			files:  map[string]string{"r.md": "## Summary\n"},
			params: Params{"file": "r.md", "section": "Summary", "on_fail": "implement.code"},
			kind:   KindRedirect, target: "implement.code"},
		{name: "all_checked: one open box", files: files,
			params: Params{"file": "review.md", "section": "Checklist", "expect": "all_checked"}, kind: KindFail,
			reason: []string{`review.md: section "Checklist" has 1 unchecked box ("tests for the CLI"); do it and check the box (` + "`- [x]`" + `)`}},
		{name: "all_checked: all done",
			files:  map[string]string{"r.md": "## Checklist\n- [x] a\n- [X] b\n- plain item\n"},
			params: Params{"file": "r.md", "section": "Checklist", "expect": "all_checked"}, kind: KindPass},
		{name: "all_checked: open box hidden in a comment",
			files:  map[string]string{"r.md": "## Checklist\n- [x] a\n<!--\n- [ ] b\n-->\n"},
			params: Params{"file": "r.md", "section": "Checklist", "expect": "all_checked"}, kind: KindPass},
		{name: "all_checked: no boxes at all",
			files:  map[string]string{"r.md": "## Checklist\nall good\n"},
			params: Params{"file": "r.md", "section": "Checklist", "expect": "all_checked"}, kind: KindFail,
			reason: []string{`section "Checklist" has no checkboxes`}},
		{name: "missing section lists the ones there are", files: files,
			params: Params{"file": "review.md", "section": "Security", "expect": "empty"}, kind: KindFail,
			reason: []string{`review.md: no section "Security"`, `its sections are "Summary", "Critical Issues", "Deferred"`, "add a `## Security` heading"}},
		{name: "missing section does not redirect", files: files,
			params: Params{"file": "review.md", "section": "Security", "on_fail": "implement.code"}, kind: KindFail},
		{name: "missing file", params: Params{"file": "review.md", "section": "Summary"}, kind: KindFail,
			reason: []string{"review.md: not found"}},
		{name: "h4 inside the section is content",
			files:  map[string]string{"r.md": "## Critical Issues\n#### Note\n- x\n"},
			params: Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, kind: KindFail},
		{name: "code block items are not list items",
			files:  map[string]string{"r.md": "## Critical Issues\n```\n- x\n# y\n```\n"},
			params: Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, kind: KindPass},
	})
}

func TestHasListItems(t *testing.T) {
	files := map[string]string{"plan.md": "# Plan\n- one\n- two\n\n## Steps\n1. first\n2. \n<!-- 3. hidden -->\n"}
	runCases(t, "has_list_items", []hookCase{
		{name: "whole file, default min", files: files, params: Params{"file": "plan.md"}, kind: KindPass},
		{name: "whole file counts every section", files: files, params: Params{"file": "plan.md", "min": 3}, kind: KindPass},
		{name: "whole file too few", files: files, params: Params{"file": "plan.md", "min": 4}, kind: KindFail,
			reason: []string{"plan.md has 3 list items, needs at least 4", "`- item` lines"}},
		{name: "section", files: files, params: Params{"file": "plan.md", "section": "Steps"}, kind: KindPass},
		{name: "section skips blank and commented items", files: files, params: Params{"file": "plan.md", "section": "Steps", "min": 2},
			kind: KindFail, reason: []string{`plan.md: section "Steps" has 1 list item, needs at least 2`}},
		{name: "no items", files: map[string]string{"plan.md": "prose only\n"}, params: Params{"file": "plan.md"}, kind: KindFail,
			reason: []string{"plan.md has 0 list items, needs at least 1"}},
		{name: "missing section", files: files, params: Params{"file": "plan.md", "section": "Risks"}, kind: KindFail,
			reason: []string{`no section "Risks"`}},
	})
}

func TestCheckboxChecked(t *testing.T) {
	files := map[string]string{"review.md": review}
	runCases(t, "checkbox_checked", []hookCase{
		{name: "checked, case-insensitive", files: files, params: Params{"file": "review.md", "item": "tests pass"}, kind: KindPass},
		{name: "substring", files: files, params: Params{"file": "review.md", "item": "DOCS"}, kind: KindPass},
		{name: "exact match wins over a longer unchecked box", files: files,
			params: Params{"file": "review.md", "item": "Tests pass", "section": "Checklist"}, kind: KindPass},
		{name: "unchecked", files: files, params: Params{"file": "review.md", "item": "for the cli"}, kind: KindFail,
			reason: []string{`review.md: box "tests for the CLI" is not checked`, "`- [x]`"}},
		{name: "every substring match must be checked", files: files, params: Params{"file": "review.md", "item": "tests"}, kind: KindFail,
			reason: []string{`box "tests for the CLI" is not checked`}},
		{name: "unchecked redirects with on_fail", files: files,
			params: Params{"file": "review.md", "item": "for the cli", "on_fail": "implement.code"}, kind: KindRedirect, target: "implement.code"},
		{name: "missing box", files: files, params: Params{"file": "review.md", "item": "security review"}, kind: KindFail,
			reason: []string{`review.md has no checkbox "security review"`, "add `- [ ] security review`"}},
		{name: "plain list items are not boxes", files: files, params: Params{"file": "review.md", "item": "rename the handler"}, kind: KindFail,
			reason: []string{"has no checkbox"}},
		{name: "outside the section", files: files, params: Params{"file": "review.md", "item": "tests pass", "section": "Deferred"}, kind: KindFail,
			reason: []string{`review.md: section "Deferred" has no checkbox "tests pass"`}},
		{name: "commented box does not count",
			files:  map[string]string{"r.md": "<!-- - [x] done -->\n- [ ] done\n"},
			params: Params{"file": "r.md", "item": "done"}, kind: KindFail},
	})
}

func TestFieldCheck(t *testing.T) {
	files := map[string]string{"review.md": review}
	runCases(t, "field_check", []hookCase{
		{name: "in range", files: files, params: Params{"file": "review.md", "field": "scores.overall", "min": 7.0, "max": 10.0}, kind: KindPass},
		{name: "no bounds: present and numeric", files: files, params: Params{"file": "review.md", "field": "scores.overall"}, kind: KindPass},
		{name: "bounds are inclusive", files: files, params: Params{"file": "review.md", "field": "scores.overall", "min": 8.0, "max": 8.0}, kind: KindPass},
		{name: "below min", files: files, params: Params{"file": "review.md", "field": "scores.overall", "min": 9.0, "max": 10.0}, kind: KindFail,
			reason: []string{"review.md: field scores.overall is 8, outside the allowed range (allowed 9 to 10)"}},
		{name: "above max", files: files, params: Params{"file": "review.md", "field": "scores.overall", "max": 7.5}, kind: KindFail,
			reason: []string{"is 8, outside the allowed range (at most 7.5)"}},
		{name: "numeric string", files: files, params: Params{"file": "review.md", "field": "scores.style", "min": 7.0}, kind: KindFail,
			reason: []string{"field scores.style is 6, outside the allowed range (at least 7)"}},
		{name: "list index", files: files, params: Params{"file": "review.md", "field": "reviews.0.score", "min": 3.0}, kind: KindPass},
		{name: "not a number", files: files, params: Params{"file": "review.md", "field": "scores.note", "min": 1.0}, kind: KindFail,
			reason: []string{`field scores.note is "good", not a number`}},
		{name: "missing field", files: files, params: Params{"file": "review.md", "field": "scores.security", "min": 1.0}, kind: KindFail,
			reason: []string{"review.md: no field scores.security in its yaml blocks", "add `scores.security` (at least 1)"}},
		{name: "no yaml block", files: map[string]string{"r.md": "score: 8\n"}, params: Params{"file": "r.md", "field": "score"}, kind: KindFail,
			reason: []string{"r.md: no ```yaml block"}},
		{name: "first block holding the field wins",
			files:  map[string]string{"r.md": "```yaml\nother: 1\n```\n```yml\nscore: 2\n```\n```yaml\nscore: 9\n```\n"},
			params: Params{"file": "r.md", "field": "score", "max": 5.0}, kind: KindPass},
		{name: "broken yaml is reported",
			files:  map[string]string{"r.md": "```yaml\nscore: [1\n```\n"},
			params: Params{"file": "r.md", "field": "score"}, kind: KindFail, reason: []string{"no field score", "yaml block 1:"}},
		{name: "commented block ignored",
			files:  map[string]string{"r.md": "<!--\n```yaml\nscore: 9\n```\n-->\n```yaml\nscore: 1\n```\n"},
			params: Params{"file": "r.md", "field": "score", "min": 5.0}, kind: KindFail, reason: []string{"field score is 1"}},
		{name: "float", files: map[string]string{"r.md": "```yaml\nscore: 7.25\n```\n"},
			params: Params{"file": "r.md", "field": "score", "min": 7.2}, kind: KindPass},
	})
}

func TestMinWords(t *testing.T) {
	files := map[string]string{"plan.md": "# A long heading that does not count at all\n" +
		"<!-- ten words of template instructions here that never count -->\n" +
		"one two three\n\n## Approach\nfour five\n"}
	runCases(t, "min_words", []hookCase{
		{name: "whole file", files: files, params: Params{"file": "plan.md", "min": 5}, kind: KindPass},
		{name: "whole file too short", files: files, params: Params{"file": "plan.md", "min": 6}, kind: KindFail,
			reason: []string{"plan.md has 5 words, needs at least 6; write more"}},
		{name: "section", files: files, params: Params{"file": "plan.md", "min": 2, "section": "approach"}, kind: KindPass},
		{name: "section too short", files: files, params: Params{"file": "plan.md", "min": 3, "section": "Approach"}, kind: KindFail,
			reason: []string{`plan.md: section "Approach" has 2 words, needs at least 3`}},
	})
}

func TestContains(t *testing.T) {
	files := map[string]string{"review.md": "Verdict: APPROVED\n<!-- write LGTM when done -->\n## Notes\nnothing\n"}
	runCases(t, "contains", []hookCase{
		{name: "found", files: files, params: Params{"file": "review.md", "text": "APPROVED"}, kind: KindPass},
		{name: "case-sensitive", files: files, params: Params{"file": "review.md", "text": "approved"}, kind: KindFail,
			reason: []string{`review.md does not contain "approved"`}},
		{name: "comments do not count", files: files, params: Params{"file": "review.md", "text": "LGTM"}, kind: KindFail},
		{name: "section", files: files, params: Params{"file": "review.md", "text": "APPROVED", "section": "Notes"}, kind: KindFail,
			reason: []string{`review.md: section "Notes" does not contain "APPROVED"`}},
		{name: "values: all present", files: files, params: Params{"file": "review.md", "values": []string{"Verdict", "APPROVED"}}, kind: KindPass},
		{name: "values: one missing", files: files, params: Params{"file": "review.md", "values": []string{"Verdict", "LGTM"}}, kind: KindFail,
			reason: []string{`review.md does not contain "LGTM"`, "add it"}},
		{name: "values: several missing", files: files, params: Params{"file": "review.md", "values": []string{"Risks", "Verdict", "LGTM"}}, kind: KindFail,
			reason: []string{`review.md does not contain "Risks", "LGTM"`, "add them"}},
		{name: "neither text nor values", files: files, params: Params{"file": "review.md"}, kind: KindFail,
			reason: []string{"hook `contains` takes exactly one of `text`, `values`, got 0"}},
		{name: "both text and values", files: files, params: Params{"file": "review.md", "text": "x", "values": []string{"y"}}, kind: KindFail,
			reason: []string{"takes exactly one of `text`, `values`, got 2"}},
	})
}

func TestTitleSet(t *testing.T) {
	tests := []struct {
		title string
		ok    bool
	}{
		{"Add login form", true},
		{"TODO: add login", true},
		{"", false},
		{"   ", false},
		{"Untitled", false},
		{"todo", false},
		{"TBD.", false},
		{"New Issue", false},
		{"(untitled)", false},
	}
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			o := callHook(t, context.Background(), "title_set", &Issue{Title: tt.title}, Params{})
			if tt.ok {
				assert.Equal(t, KindPass, o.Kind)
				return
			}
			assert.Equal(t, KindFail, o.Kind)
			assert.Contains(t, o.Reason, "set a real title")
			assert.NotContains(t, o.Reason, "agenttree issue")
		})
	}
}
