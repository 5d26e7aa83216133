package docs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
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
	hookstest.RunCases(t, registry(), "file_exists", []hookstest.Case{
		{Name: "present", Files: map[string]string{"review.md": "x"}, Params: hooks.Params{"file": "review.md"}, Kind: hooks.KindPass},
		{Name: "nested", Files: map[string]string{"docs/plan.md": "x"}, Params: hooks.Params{"file": "docs/plan.md"}, Kind: hooks.KindPass},
		{Name: "dot segments inside", Files: map[string]string{"plan.md": "x"}, Params: hooks.Params{"file": "docs/../plan.md"}, Kind: hooks.KindPass},
		{Name: "missing", Params: hooks.Params{"file": "review.md"}, Kind: hooks.KindFail,
			Reason: []string{"review.md: not found in the issue directory", "write it, then run `agenttree next` again"}},
		{Name: "directory", Files: map[string]string{"review.md/x": "x"}, Params: hooks.Params{"file": "review.md"}, Kind: hooks.KindFail,
			Reason: []string{"review.md: is a directory, not a file"}},
		{Name: "no file param", Params: hooks.Params{}, Kind: hooks.KindFail, Reason: []string{"needs parameter `file`"}},
	})
}

// TestFileParamsStayInIssueDir checks every hook that reads a file refuses
// paths leading outside the issue directory.
func TestFileParamsStayInIssueDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "issue")
	hookstest.WriteFiles(t, root, map[string]string{"secret.md": "## S\n- item\n", "issue/inside.md": "## S\n- item\n"})
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
	checks := map[string]hooks.Params{
		"file_exists":      {},
		"section_check":    {"section": "S"},
		"has_list_items":   {},
		"checkbox_checked": {"item": "item"},
		"field_check":      {"field": "x"},
		"min_words":        {"min": 1},
		"contains":         {"text": "item"},
	}
	for hook, base := range checks {
		for _, p := range paths {
			t.Run(hook+"/"+p.file, func(t *testing.T) {
				params := hooks.Params{"file": p.file, "on_fail": "implement.code"}
				for k, v := range base {
					params[k] = v
				}
				o := hookstest.Call(t, registry(), hook, &hooks.Issue{Dir: dir}, params, nil)
				if p.reason == "" {
					assert.NotContains(t, o.Reason, "outside")
					return
				}
				// Path problems block even with on_fail: they are config errors.
				assert.Equal(t, hooks.KindFail, o.Kind)
				assert.Contains(t, o.Reason, p.file+": "+p.reason)
			})
		}
	}
}

func TestSectionCheck(t *testing.T) {
	files := map[string]string{"review.md": review}
	hookstest.RunCases(t, registry(), "section_check", []hookstest.Case{
		{Name: "empty: comment hides the template item", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindPass},
		{Name: "empty: ### subsection is not part of the section", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "critical issues", "expect": "empty"}, Kind: hooks.KindPass},
		{Name: "empty: items left", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "Deferred", "expect": "empty"}, Kind: hooks.KindFail,
			Reason: []string{`review.md: section "Deferred" still has 1 list item ("rename the handler later"); resolve it and remove it from the section`, "then run `agenttree next` again"}},
		{Name: "empty: many items are summarized",
			Files:  map[string]string{"r.md": "## Critical Issues\n- a\n- [x] b\n1. c\n* d\n"},
			Params: hooks.Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindFail,
			Reason: []string{`still has 4 list items ("a", "b", "c", and 1 more); resolve them and remove them`}},
		{Name: "empty: blank items do not count",
			Files:  map[string]string{"r.md": "## Critical Issues\n- \n1.\nN/A\n"},
			Params: hooks.Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindPass},
		{Name: "empty: on_fail redirects", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "Deferred", "expect": "empty", "on_fail": "implement.code"},
			Kind:   hooks.KindRedirect, Target: "implement.code", Reason: []string{`section "Deferred" still has 1 list item`}},
		{Name: "not_empty is the default", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "Summary"}, Kind: hooks.KindPass},
		{Name: "not_empty: only a comment",
			Files:  map[string]string{"r.md": "## Summary\n<!-- write a summary -->\n\n## Next\ntext\n"},
			Params: hooks.Params{"file": "r.md", "section": "Summary", "expect": "not_empty"}, Kind: hooks.KindFail,
			Reason: []string{`r.md: section "Summary" is empty; write it, then run`}},
		{Name: "not_empty: on_fail redirects",
			Files:  map[string]string{"r.md": "## Summary\n"},
			Params: hooks.Params{"file": "r.md", "section": "Summary", "on_fail": "implement.code"},
			Kind:   hooks.KindRedirect, Target: "implement.code"},
		{Name: "all_checked: one open box", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "Checklist", "expect": "all_checked"}, Kind: hooks.KindFail,
			Reason: []string{`review.md: section "Checklist" has 1 unchecked box ("tests for the CLI"); do it and check the box (` + "`- [x]`" + `)`}},
		{Name: "all_checked: all done",
			Files:  map[string]string{"r.md": "## Checklist\n- [x] a\n- [X] b\n- plain item\n"},
			Params: hooks.Params{"file": "r.md", "section": "Checklist", "expect": "all_checked"}, Kind: hooks.KindPass},
		{Name: "all_checked: open box hidden in a comment",
			Files:  map[string]string{"r.md": "## Checklist\n- [x] a\n<!--\n- [ ] b\n-->\n"},
			Params: hooks.Params{"file": "r.md", "section": "Checklist", "expect": "all_checked"}, Kind: hooks.KindPass},
		{Name: "all_checked: no boxes at all",
			Files:  map[string]string{"r.md": "## Checklist\nall good\n"},
			Params: hooks.Params{"file": "r.md", "section": "Checklist", "expect": "all_checked"}, Kind: hooks.KindFail,
			Reason: []string{`section "Checklist" has no checkboxes`}},
		{Name: "missing section lists the ones there are", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "Security", "expect": "empty"}, Kind: hooks.KindFail,
			Reason: []string{`review.md: no section "Security"`, `its sections are "Summary", "Critical Issues", "Deferred"`, "add a `## Security` heading"}},
		{Name: "a second section of the same title is not passed over",
			Files:  map[string]string{"r.md": "## Critical Issues\nNone\n\n## Notes\n\n## Critical Issues\n- SQL injection\n"},
			Params: hooks.Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindFail,
			Reason: []string{`r.md has 2 sections titled "Critical Issues"; merge them into one`}},
		{Name: "old Mac line ends (CR alone) are line ends",
			Files:  map[string]string{"r.md": "## Critical Issues\r\r- SQL injection\r"},
			Params: hooks.Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindFail,
			Reason: []string{`still has 1 list item ("SQL injection")`}},
		{Name: "a byte order mark does not hide the first heading",
			Files:  map[string]string{"r.md": "\uFEFF## Critical Issues\n- SQL injection\n"},
			Params: hooks.Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindFail,
			Reason: []string{`still has 1 list item ("SQL injection")`}},
		{Name: "missing section does not redirect", Files: files,
			Params: hooks.Params{"file": "review.md", "section": "Security", "on_fail": "implement.code"}, Kind: hooks.KindFail},
		{Name: "missing file", Params: hooks.Params{"file": "review.md", "section": "Summary"}, Kind: hooks.KindFail,
			Reason: []string{"review.md: not found"}},
		{Name: "h4 inside the section is content",
			Files:  map[string]string{"r.md": "## Critical Issues\n#### Note\n- x\n"},
			Params: hooks.Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindFail},
		{Name: "code block items are not list items",
			Files:  map[string]string{"r.md": "## Critical Issues\n```\n- x\n# y\n```\n"},
			Params: hooks.Params{"file": "r.md", "section": "Critical Issues", "expect": "empty"}, Kind: hooks.KindPass},
	})
}

func TestHasListItems(t *testing.T) {
	files := map[string]string{"plan.md": "# Plan\n- one\n- two\n\n## Steps\n1. first\n2. \n<!-- 3. hidden -->\n"}
	hookstest.RunCases(t, registry(), "has_list_items", []hookstest.Case{
		{Name: "whole file, default min", Files: files, Params: hooks.Params{"file": "plan.md"}, Kind: hooks.KindPass},
		{Name: "whole file counts every section", Files: files, Params: hooks.Params{"file": "plan.md", "min": 3}, Kind: hooks.KindPass},
		{Name: "whole file too few", Files: files, Params: hooks.Params{"file": "plan.md", "min": 4}, Kind: hooks.KindFail,
			Reason: []string{"plan.md has 3 list items, needs at least 4", "`- item` lines"}},
		{Name: "section", Files: files, Params: hooks.Params{"file": "plan.md", "section": "Steps"}, Kind: hooks.KindPass},
		{Name: "section skips blank and commented items", Files: files, Params: hooks.Params{"file": "plan.md", "section": "Steps", "min": 2},
			Kind: hooks.KindFail, Reason: []string{`plan.md: section "Steps" has 1 list item, needs at least 2`}},
		{Name: "no items", Files: map[string]string{"plan.md": "prose only\n"}, Params: hooks.Params{"file": "plan.md"}, Kind: hooks.KindFail,
			Reason: []string{"plan.md has 0 list items, needs at least 1"}},
		{Name: "missing section", Files: files, Params: hooks.Params{"file": "plan.md", "section": "Risks"}, Kind: hooks.KindFail,
			Reason: []string{`no section "Risks"`}},
	})
}

func TestCheckboxChecked(t *testing.T) {
	files := map[string]string{"review.md": review}
	hookstest.RunCases(t, registry(), "checkbox_checked", []hookstest.Case{
		{Name: "checked, case-insensitive", Files: files, Params: hooks.Params{"file": "review.md", "item": "tests pass"}, Kind: hooks.KindPass},
		{Name: "substring", Files: files, Params: hooks.Params{"file": "review.md", "item": "DOCS"}, Kind: hooks.KindPass},
		{Name: "exact match wins over a longer unchecked box", Files: files,
			Params: hooks.Params{"file": "review.md", "item": "Tests pass", "section": "Checklist"}, Kind: hooks.KindPass},
		{Name: "unchecked", Files: files, Params: hooks.Params{"file": "review.md", "item": "for the cli"}, Kind: hooks.KindFail,
			Reason: []string{`review.md: box "tests for the CLI" is not checked`, "`- [x]`"}},
		{Name: "every substring match must be checked", Files: files, Params: hooks.Params{"file": "review.md", "item": "tests"}, Kind: hooks.KindFail,
			Reason: []string{`box "tests for the CLI" is not checked`}},
		{Name: "unchecked redirects with on_fail", Files: files,
			Params: hooks.Params{"file": "review.md", "item": "for the cli", "on_fail": "implement.code"}, Kind: hooks.KindRedirect, Target: "implement.code"},
		{Name: "missing box", Files: files, Params: hooks.Params{"file": "review.md", "item": "security review"}, Kind: hooks.KindFail,
			Reason: []string{`review.md has no checkbox "security review"`, "add `- [ ] security review`"}},
		{Name: "plain list items are not boxes", Files: files, Params: hooks.Params{"file": "review.md", "item": "rename the handler"}, Kind: hooks.KindFail,
			Reason: []string{"has no checkbox"}},
		{Name: "outside the section", Files: files, Params: hooks.Params{"file": "review.md", "item": "tests pass", "section": "Deferred"}, Kind: hooks.KindFail,
			Reason: []string{`review.md: section "Deferred" has no checkbox "tests pass"`}},
		{Name: "commented box does not count",
			Files:  map[string]string{"r.md": "<!-- - [x] done -->\n- [ ] done\n"},
			Params: hooks.Params{"file": "r.md", "item": "done"}, Kind: hooks.KindFail},
	})
}

func TestFieldCheck(t *testing.T) {
	files := map[string]string{"review.md": review}
	hookstest.RunCases(t, registry(), "field_check", []hookstest.Case{
		{Name: "in range", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.overall", "min": 7.0, "max": 10.0}, Kind: hooks.KindPass},
		{Name: "no bounds: present and numeric", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.overall"}, Kind: hooks.KindPass},
		{Name: "bounds are inclusive", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.overall", "min": 8.0, "max": 8.0}, Kind: hooks.KindPass},
		{Name: "below min", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.overall", "min": 9.0, "max": 10.0}, Kind: hooks.KindFail,
			Reason: []string{"review.md: field scores.overall is 8, outside the allowed range (allowed 9 to 10)"}},
		{Name: "above max", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.overall", "max": 7.5}, Kind: hooks.KindFail,
			Reason: []string{"is 8, outside the allowed range (at most 7.5)"}},
		{Name: "numeric string", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.style", "min": 7.0}, Kind: hooks.KindFail,
			Reason: []string{"field scores.style is 6, outside the allowed range (at least 7)"}},
		{Name: "list index", Files: files, Params: hooks.Params{"file": "review.md", "field": "reviews.0.score", "min": 3.0}, Kind: hooks.KindPass},
		{Name: "not a number", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.note", "min": 1.0}, Kind: hooks.KindFail,
			Reason: []string{`field scores.note is "good", not a number`}},
		{Name: "missing field", Files: files, Params: hooks.Params{"file": "review.md", "field": "scores.security", "min": 1.0}, Kind: hooks.KindFail,
			Reason: []string{"review.md: no field scores.security in its yaml blocks", "add `scores.security` (at least 1)"}},
		{Name: "no yaml block", Files: map[string]string{"r.md": "score: 8\n"}, Params: hooks.Params{"file": "r.md", "field": "score"}, Kind: hooks.KindFail,
			Reason: []string{"r.md: no ```yaml block"}},
		{Name: "first block holding the field wins",
			Files:  map[string]string{"r.md": "```yaml\nother: 1\n```\n```yml\nscore: 2\n```\n```yaml\nscore: 9\n```\n"},
			Params: hooks.Params{"file": "r.md", "field": "score", "max": 5.0}, Kind: hooks.KindPass},
		{Name: "broken yaml is reported",
			Files:  map[string]string{"r.md": "```yaml\nscore: [1\n```\n"},
			Params: hooks.Params{"file": "r.md", "field": "score"}, Kind: hooks.KindFail, Reason: []string{"no field score", "yaml block 1:"}},
		{Name: "commented block ignored",
			Files:  map[string]string{"r.md": "<!--\n```yaml\nscore: 9\n```\n-->\n```yaml\nscore: 1\n```\n"},
			Params: hooks.Params{"file": "r.md", "field": "score", "min": 5.0}, Kind: hooks.KindFail, Reason: []string{"field score is 1"}},
		{Name: "float", Files: map[string]string{"r.md": "```yaml\nscore: 7.25\n```\n"},
			Params: hooks.Params{"file": "r.md", "field": "score", "min": 7.2}, Kind: hooks.KindPass},
	})
}

func TestMinWords(t *testing.T) {
	files := map[string]string{"plan.md": "# A long heading that does not count at all\n" +
		"<!-- ten words of template instructions here that never count -->\n" +
		"one two three\n\n## Approach\nfour five\n"}
	hookstest.RunCases(t, registry(), "min_words", []hookstest.Case{
		{Name: "whole file", Files: files, Params: hooks.Params{"file": "plan.md", "min": 5}, Kind: hooks.KindPass},
		{Name: "whole file too short", Files: files, Params: hooks.Params{"file": "plan.md", "min": 6}, Kind: hooks.KindFail,
			Reason: []string{"plan.md has 5 words, needs at least 6; write more"}},
		{Name: "section", Files: files, Params: hooks.Params{"file": "plan.md", "min": 2, "section": "approach"}, Kind: hooks.KindPass},
		{Name: "section too short", Files: files, Params: hooks.Params{"file": "plan.md", "min": 3, "section": "Approach"}, Kind: hooks.KindFail,
			Reason: []string{`plan.md: section "Approach" has 2 words, needs at least 3`}},
	})
}

func TestContains(t *testing.T) {
	files := map[string]string{"review.md": "Verdict: APPROVED\n<!-- write LGTM when done -->\n## Notes\nnothing\n"}
	hookstest.RunCases(t, registry(), "contains", []hookstest.Case{
		{Name: "found", Files: files, Params: hooks.Params{"file": "review.md", "text": "APPROVED"}, Kind: hooks.KindPass},
		{Name: "case-sensitive", Files: files, Params: hooks.Params{"file": "review.md", "text": "approved"}, Kind: hooks.KindFail,
			Reason: []string{`review.md does not contain "approved"`}},
		{Name: "comments do not count", Files: files, Params: hooks.Params{"file": "review.md", "text": "LGTM"}, Kind: hooks.KindFail},
		{Name: "section", Files: files, Params: hooks.Params{"file": "review.md", "text": "APPROVED", "section": "Notes"}, Kind: hooks.KindFail,
			Reason: []string{`review.md: section "Notes" does not contain "APPROVED"`}},
		{Name: "values: all present", Files: files, Params: hooks.Params{"file": "review.md", "values": []string{"Verdict", "APPROVED"}}, Kind: hooks.KindPass},
		{Name: "values: one missing", Files: files, Params: hooks.Params{"file": "review.md", "values": []string{"Verdict", "LGTM"}}, Kind: hooks.KindFail,
			Reason: []string{`review.md does not contain "LGTM"`, "add it"}},
		{Name: "values: several missing", Files: files, Params: hooks.Params{"file": "review.md", "values": []string{"Risks", "Verdict", "LGTM"}}, Kind: hooks.KindFail,
			Reason: []string{`review.md does not contain "Risks", "LGTM"`, "add them"}},
		{Name: "neither text nor values", Files: files, Params: hooks.Params{"file": "review.md"}, Kind: hooks.KindFail,
			Reason: []string{"hook `contains` takes exactly one of `text`, `values`, got 0"}},
		{Name: "both text and values", Files: files, Params: hooks.Params{"file": "review.md", "text": "x", "values": []string{"y"}}, Kind: hooks.KindFail,
			Reason: []string{"takes exactly one of `text`, `values`, got 2"}},
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
			o := hookstest.Call(t, registry(), "title_set", &hooks.Issue{Title: tt.title}, hooks.Params{}, nil)
			if tt.ok {
				assert.Equal(t, hooks.KindPass, o.Kind)
				return
			}
			assert.Equal(t, hooks.KindFail, o.Kind)
			assert.Contains(t, o.Reason, "set a real title")
			assert.NotContains(t, o.Reason, "agenttree issue")
		})
	}
}

// registry holds the document hooks, as the tests call them.
func registry() *hooks.Registry { return hooks.NewRegistry(Defs()...) }

// Gates read the issue's documents and nothing else: a document named
// outside the issue's directory is refused when the config is loaded.
func TestDocumentsOutsideTheIssueDirectoryAreRefusedAtLoad(t *testing.T) {
	for _, hook := range []string{"file_exists: /etc/passwd", "min_words: ../../secrets.md", `create_file: {dest: /tmp/x.md, content: "x"}`} {
		t.Run(hook, func(t *testing.T) {
			_, _, err := hookstest.LoadEntry(registry(), "pre_completion", hook)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is not a document in the issue's directory")
		})
	}
	_, _, err := hookstest.LoadEntry(registry(), "pre_completion", "file_exists: notes/{{issue_id}}.md")
	assert.NoError(t, err, "a relative path, placeholders included, is one")
}
