// Package docs holds the hooks that read and create the stage documents
// agents write in the issue directory (review.md, plan.md, ...):
// file_exists, section_check, has_list_items, checkbox_checked,
// field_check, min_words, contains and create_file, and title_set, which
// checks the issue's own title.
package docs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// The parameters the document hooks share.
var (
	fileParam    = hooks.String("file", "the document, relative to the issue directory").Required()
	sectionParam = hooks.String("section",
		"narrows the check to the `##` or `###` section whose title starts with this (an exact title wins); empty: the whole document").Default("")
	onFailParam = hooks.StageRef("on_fail",
		"where a content check that fails sends the issue (a redirect) instead of blocking it; unset: it blocks. "+
			"It may not jump past the controller's stage or a human review, nor into a completion", stages.MoveRedirect).
		Aliases("on_fail_stage", "on_fail_substage")
)

// Defs are the document hooks.
func Defs() []hooks.Def {
	defs := []hooks.Def{
		{HookSpec: stages.HookSpec{Name: "file_exists", Main: "file", Params: hooks.Specs(fileParam),
			Doc:     "Passes when the document exists in the issue directory.",
			Example: "- file_exists: review.md"}, Run: fileExists},
		{HookSpec: stages.HookSpec{Name: "section_check",
			Params: hooks.Specs(fileParam, sectionRequired, expectParam, onFailParam),
			Doc: "Checks one `##` or `###` section of a document: that it has no list items left (empty), " +
				"holds some text (not_empty), or has every checkbox checked (all_checked).",
			Example: "- section_check: {file: review.md, section: Critical Issues, expect: empty}"}, Run: sectionCheck},
		{HookSpec: stages.HookSpec{Name: "has_list_items", Main: "file",
			Params:  hooks.Specs(fileParam, sectionParam, minItemsParam),
			Doc:     "Passes when the document, or one of its sections, has at least `min` list items with text.",
			Example: "- has_list_items: {file: plan.md, section: Steps, min: 3}"}, Run: hasListItems},
		{HookSpec: stages.HookSpec{Name: "checkbox_checked",
			Params:  hooks.Specs(fileParam, itemParam, sectionParam, onFailParam),
			Doc:     "Passes when the checkbox whose text matches `item` is checked (`- [x]`); unchecked, it blocks or redirects to `on_fail`.",
			Example: "- checkbox_checked: {file: review.md, item: Approve, on_fail: implement.code}"}, Run: checkboxChecked},
		{HookSpec: stages.HookSpec{Name: "field_check",
			Params:  hooks.Specs(fileParam, fieldParam, minValueParam, maxValueParam),
			Doc:     "Reads a number from the YAML code blocks of the document and checks it lies between `min` and `max`.",
			Example: "- field_check: {file: review.md, field: scores.overall, min: 7}"}, Run: fieldCheck},
		{HookSpec: stages.HookSpec{Name: "min_words", Main: "file",
			Params:  hooks.Specs(fileParam, minWordsParam, sectionParam),
			Doc:     "Passes when the document, or one of its sections, has at least `min` words.",
			Example: "- min_words: {file: summary.md, min: 50}"}, Run: minWords},
		{HookSpec: stages.HookSpec{Name: "contains",
			Params:  hooks.Specs(fileParam, textParam, valuesParam, sectionParam),
			OneOf:   [][]string{{textParam.Name(), valuesParam.Name()}},
			Doc:     "Passes when the document, or one of its sections, contains `text` (or every one of `values`).",
			Example: "- contains: {file: review.md, text: \"Verdict:\"}"}, Run: containsText},
		{HookSpec: stages.HookSpec{Name: "title_set",
			Doc:     "Passes when the issue has a real title, not an empty one or a placeholder such as \"TODO\" or \"untitled\".",
			Example: "- title_set:"}, Run: titleSet},
		{HookSpec: stages.HookSpec{Name: "create_file",
			Params: hooks.Specs(destParam, templateParam, contentParam),
			OneOf:  [][]string{{templateParam.Name(), contentParam.Name()}},
			Doc: "Gives the agent a document to fill in, from a template file or inline content; " +
				"it never overwrites a file that exists, so entering the stage again keeps the agent's edits.",
			Example: "- create_file: {dest: review.md, template: review.md}"}, Run: createFile},
	}
	for i := range defs {
		defs[i].Check = inIssueDir
	}
	return defs
}

// inIssueDir refuses, when the config is loaded, a document named
// outside the issue's directory (`file_exists: /etc/passwd`, `../x`):
// gates read the issue's documents and nothing else.
func inIssueDir(params map[string]any) error {
	var errs []error
	for _, name := range []string{fileParam.Name(), destParam.Name()} {
		if v, ok := params[name].(string); ok && !filepath.IsLocal(v) {
			errs = append(errs, fmt.Errorf("parameter `%s`: %q is not a document in the issue's directory; give a path relative to it, such as review.md", name, v))
		}
	}
	// create_file writes its dest in the issue directory itself, never in
	// a subdirectory it would have to make.
	if v, ok := params[destParam.Name()].(string); ok && filepath.IsLocal(v) && strings.ContainsAny(v, `/\`) {
		errs = append(errs, fmt.Errorf("parameter `dest`: %q names a subdirectory; give a plain file name, such as %s", v, filepath.Base(v)))
	}
	return errors.Join(errs...)
}
